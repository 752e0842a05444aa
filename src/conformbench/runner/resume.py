"""Resuming a run: which replay in OUT a run continues, grows, or (with
--force) moves aside."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from conformbench.errors import UsageError
from conformbench.records.replay_file import ReplayContents, read_replay
from conformbench.records.spec import RunSpec
from conformbench.runner.extend import Growth, grow_replay
from conformbench.runner.units import TaskPlan

__all__ = ["existing_replay"]


def _move_aside(path: Path) -> Path:
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    backup = path.with_name(f"{path.stem}.{stamp}.jsonl.bak")
    path.rename(backup)
    return backup


def existing_replay(path: Path, spec: RunSpec, plans: list[TaskPlan], force: bool,
                    loaded: ReplayContents | None = None) -> tuple[ReplayContents | None, Growth]:
    """The replay to resume (grown to a larger n or budgets where that is
    all that changed, with what grew), or None to start afresh (moving a
    different run's replay aside only with --force). ``loaded``: its
    contents where the caller has read it already (the file is read once)."""
    if loaded is None and not path.exists():
        return None, Growth()
    hint = "use a new --out directory, or --force to move the old replay aside"
    try:
        contents: ReplayContents | None = loaded or read_replay(path)
    except UsageError as exc:
        if not force:
            raise UsageError(f"{exc}; {hint}") from None
        contents = None
    wanted = spec.replay_dict()
    if contents is not None and contents.header.spec == wanted:
        return contents, Growth()
    if contents is not None and (grown := grow_replay(contents, wanted, plans)):
        return contents, grown
    if contents is not None and not contents.generations:
        path.unlink()  # a run that generated nothing (e.g. a model that failed to load)
        return None, Growth()
    if not force:
        raise UsageError(f"{path} holds a run of a different spec; {_scoring_only(contents, wanted) or hint}")
    _move_aside(path)
    return None, Growth()


def _scoring_only(contents: ReplayContents | None, wanted: dict[str, Any]) -> str | None:
    """The advice when the specs differ only in format_assertion, which
    changes how the recorded generations are scored, not the generations."""
    if contents is None:
        return None
    old = dict(contents.header.spec)
    new = dict(wanted)
    if old.pop("format_assertion", False) == new.pop("format_assertion", False) or old != new:
        return None
    flag = "--format-assertion" if wanted.get("format_assertion") else "--no-format-assertion"
    return (f"they differ only in format_assertion, which changes the scoring, not the generations: "
            f"rescore the replay with 'conformbench score {flag}'")
