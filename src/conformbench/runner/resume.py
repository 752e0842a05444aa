"""Resuming a run: which replay in OUT a run continues, grows, or (with
--force) moves aside."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from conformbench.backends.backend_options import generation_spec
from conformbench.backends.runinfo import build_facts
from conformbench.errors import UsageError
from conformbench.records.replay_file import ReplayContents, read_replay
from conformbench.records.spec import RunSpec
from conformbench.runner.extend import Growth, grow_replay, note_build
from conformbench.runner.units import TaskPlan

__all__ = ["existing_replay", "spec_differences"]

_MAX_LISTED = 3


def _move_aside(path: Path) -> Path:
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    backup = path.with_name(f"{path.stem}.{stamp}.jsonl.bak")
    path.rename(backup)
    return backup


def existing_replay(path: Path, spec: RunSpec, plans: list[TaskPlan], force: bool,
                    loaded: ReplayContents | None = None) -> tuple[ReplayContents | None, Growth]:
    """The replay to resume (grown to a larger n, samples or budgets, or
    more arms, engines or formats, where that is all that changed, with
    what grew), or None to start afresh (moving a
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
    if contents is not None and generation_spec(contents.header.spec.as_dict()) == generation_spec(wanted):
        note_build(contents, build_facts(spec.models))
        return contents, Growth()  # the same generations (operational keys may differ)
    if contents is not None and (grown := grow_replay(contents, spec.replay_spec(), plans)):
        note_build(contents, build_facts(spec.models))
        return contents, grown
    if contents is not None and not contents.generations:
        path.unlink()  # a run that generated nothing (e.g. a model that failed to load)
        return None, Growth()
    if not force:
        differs = _differs(contents, wanted)
        raise UsageError(f"{path} holds a run of a different spec{differs}; "
                         f"{_scoring_only(contents, wanted) or hint}")
    _move_aside(path)
    return None, Growth()


def _scoring_only(contents: ReplayContents | None, wanted: dict[str, Any]) -> str | None:
    """The advice when the specs differ only in format_assertion, which
    changes how the recorded generations are scored, not the generations."""
    if contents is None:
        return None
    old = contents.header.spec.as_dict()
    new = dict(wanted)
    if old.pop("format_assertion", False) == new.pop("format_assertion", False) or old != new:
        return None
    flag = "--format-assertion" if wanted.get("format_assertion") else "--no-format-assertion"
    return (f"they differ only in format_assertion, which changes the scoring, not the generations: "
            f"rescore the replay with 'conformbench score {flag}'")


def _differs(contents: ReplayContents | None, wanted: dict[str, Any]) -> str:
    if contents is None:
        return ""
    found = spec_differences(generation_spec(contents.header.spec.as_dict()), generation_spec(wanted))
    if not found:
        return ""
    more = f" (and {len(found) - _MAX_LISTED} more)" if len(found) > _MAX_LISTED else ""
    return " (" + "; ".join(found[:_MAX_LISTED]) + more + ")"


def _show(value: Any) -> str:
    return "unset" if value is _MISSING else json.dumps(value, ensure_ascii=False)[:80]


_MISSING = object()


def spec_differences(old: Any, new: Any, where: str = "") -> list[str]:
    """Each key where two replay-header specs differ, with both values:
    ``tasks[0].n: 3 in the replay, 5 now``."""
    if isinstance(old, dict) and isinstance(new, dict):
        found: list[str] = []
        for key in [*old, *(k for k in new if k not in old)]:
            path = f"{where}.{key}" if where else str(key)
            found += spec_differences(old.get(key, _MISSING), new.get(key, _MISSING), path)
        return found
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new) \
            and all(isinstance(x, dict) for x in [*old, *new]):
        return [d for i, (a, b) in enumerate(zip(old, new, strict=True))
                for d in spec_differences(a, b, f"{where}[{i}]")]
    if old == new:
        return []
    return [f"{where or 'spec'}: {_show(old)} in the replay, {_show(new)} now"]
