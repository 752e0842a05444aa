"""The ledger's door: a run folder opened against a spec and its plans.

``open_run`` folds finished parts in, then decides what the run continues
(``ledger.resume``: the same generations, a growth, or another spec), and
answers what is done, what must be redone and what grew."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from conformbench.records.replay import GenerationRecord, ReplayHeader
from conformbench.records.replay_file import REPLAY_NAME, ReplayContents, ReplayWriter
from conformbench.records.spec import RunSpec
from conformbench.runner.ledger.growth import Growth
from conformbench.runner.ledger.header import new_header
from conformbench.runner.ledger.resume import existing_replay
from conformbench.runner.ledger.shards import Shard, fold_shards, main_generations
from conformbench.runner.units import TaskPlan

__all__ = ["RunLedger", "open_run"]


@dataclass
class RunLedger:
    """What a run folder holds for one run: the file this process appends
    to, what it resumes, and what grew."""

    #: the file this process appends to: OUT/replay.jsonl, or its part's
    path: Path
    #: the header a new replay starts with
    header: ReplayHeader
    #: the replay it continues (None: a new one)
    contents: ReplayContents | None
    #: what a larger spec added (empty: nothing grew)
    growth: Growth
    #: generations folded in from finished parts (``--shard``)
    folded: int = 0
    #: for a part: the main replay's generations, which it skips
    elsewhere: tuple[GenerationRecord, ...] = ()

    def done(self) -> Iterator[GenerationRecord]:
        """Every recorded generation that is reused: not failed (a dead
        server...), and not one a larger budget may have cut (redone)."""
        recorded = self.contents.generations if self.contents else []
        for gen in [*self.elsewhere, *recorded]:
            if gen.finish_reason != "error" and gen.unit_key not in self.growth.redo:
                yield gen

    def items(self) -> set[tuple[str, str]]:
        """(task, item id) of the item records the replay holds already."""
        return {(rec.task, rec.item.id) for rec in self.contents.items} if self.contents else set()

    def writer(self) -> ReplayWriter:
        """The writer that appends to ``path`` (a new replay: its header first)."""
        if self.contents is None:
            return ReplayWriter.create(self.path, self.header)
        return ReplayWriter.resume(self.path, self.contents.good_size)


def open_run(spec: RunSpec, plans: list[TaskPlan], force: bool, shard: Shard | None = None) -> RunLedger:
    """The ledger of ``spec``'s run in ``spec.out`` (held locked by the
    caller): finished parts folded into OUT/replay.jsonl first (not for a
    part, which reads the main replay only to skip what it holds)."""
    header = new_header(spec)
    main = spec.out / REPLAY_NAME
    path = main if shard is None else shard.path(spec.out)
    folded, loaded = fold_shards(spec.out, header, plans) if shard is None else (0, None)
    elsewhere = () if shard is None else tuple(main_generations(main, header.spec, plans))
    contents, growth = existing_replay(path, spec, header.spec, plans, force, loaded)
    return RunLedger(path, header, contents, growth, folded, elsewhere)
