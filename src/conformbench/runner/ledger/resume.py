"""Resuming a run: which replay in OUT a run continues, grows, or (with
--force) moves aside."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from conformbench.backends.runinfo import build_facts
from conformbench.errors import UsageError
from conformbench.records.replay_file import ReplayContents, read_replay
from conformbench.records.spec import ReplaySpec, RunSpec
from conformbench.runner.ledger.content import check_dataset, check_items, planned_items
from conformbench.runner.ledger.growth import Growth, grow_replay
from conformbench.runner.ledger.header import note_build
from conformbench.runner.ledger.key import GenerationKey
from conformbench.runner.units import TaskPlan

__all__ = ["existing_replay"]

_HINT = "use a new --out directory, or --force to move the old replay aside"


def _move_aside(path: Path) -> Path:
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    backup = path.with_name(f"{path.stem}.{stamp}.jsonl.bak")
    path.rename(backup)
    return backup


def _load(path: Path, force: bool, loaded: ReplayContents | None) -> ReplayContents | None:
    try:
        return loaded or read_replay(path)
    except UsageError as exc:
        if not force:
            raise UsageError(f"{exc}; {_HINT}") from None
        return None


def _reused(contents: ReplayContents, spec: RunSpec, wanted: ReplaySpec,
            plans: list[TaskPlan], force: bool) -> Growth | None:
    """The growth of ``contents`` to ``wanted`` (empty: the same generations,
    operational keys aside), its content checked; None when ``wanted`` is
    another spec, or (with ``force``, or where nothing was generated) other
    content under the same names."""
    same = GenerationKey.of(contents.header.spec) == GenerationKey.of(wanted)
    try:
        check_dataset(contents.header.spec, wanted, contents.path)
        if same:
            check_items(contents, planned_items(plans))
    except UsageError:
        if force or not contents.generations:
            return None
        raise
    grown = Growth() if same else grow_replay(contents, wanted, plans)
    if not same and not grown:
        return None
    note_build(contents, build_facts(spec.models))
    return grown


def existing_replay(path: Path, spec: RunSpec, wanted: ReplaySpec, plans: list[TaskPlan], force: bool,
                    loaded: ReplayContents | None = None) -> tuple[ReplayContents | None, Growth]:
    """The replay to resume (grown to a larger n, samples or budgets, or
    more arms, engines or formats, where that is all that changed, with
    what grew), or None to start afresh (moving a different run's replay
    aside only with --force). ``wanted``: what the header of ``spec``'s run
    records; ``loaded``: the replay's contents where the caller has read it
    already (the file is read once)."""
    if loaded is None and not path.exists():
        return None, Growth()
    contents = _load(path, force, loaded)
    if contents is not None and (grown := _reused(contents, spec, wanted, plans, force)) is not None:
        return contents, grown
    if contents is not None and not contents.generations:
        path.unlink()  # a run that generated nothing (e.g. a model that failed to load)
        return None, Growth()
    if not force:
        old, new = GenerationKey.of(contents.header.spec) if contents else None, GenerationKey.of(wanted)
        differs = old.differences(new) if old else ""
        advice = _HINT
        if old is not None and old.scoring_only(new):
            flag = "--format-assertion" if wanted.format_assertion else "--no-format-assertion"
            advice = ("they differ only in format_assertion, which changes the scoring, not the generations: "
                      f"rescore the replay with 'conformbench score {flag}'")
        raise UsageError(f"{path} holds a run of a different spec{differs}; {advice}")
    _move_aside(path)
    return None, Growth()
