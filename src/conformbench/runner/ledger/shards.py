"""Sharding a run: N processes (or machines) share one spec's generations.

``conformbench run --shard K/N`` generates only the items that fall to part K
(all conditions of an item stay together, so a two-turn condition finds the
free text it reuses in its own part), into ``OUT/replay.shard-K-of-N.jsonl``.
It reads ``OUT/replay.jsonl``, when there is one, only to skip what is done.
The run without ``--shard`` then folds every part into ``OUT/replay.jsonl``
(records already there win), deletes the part files, generates whatever is
left and writes the reports.

Each run holds an advisory lock on the file it appends to for as long as it
runs (on a hidden ``.NAME.lock`` beside it, which may be left behind), so a fold never takes a part that is still being written, two processes
never append to the same file, and a part does not start while an unsharded
run writes the main replay. (No locking where the platform has no ``fcntl``.)

A fold checks content, not names (``ledger.content``): every part's item
records agree with the plan's items, the main replay's and each other's,
and every folded generation has its item record in its part.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from conformbench.errors import UsageError
from conformbench.records.items import Item
from conformbench.records.replay import GenerationRecord, ReplayHeader
from conformbench.records.replay_file import (
    REPLAY_NAME,
    ReplayContents,
    ReplayWriter,
    latest_generations,
    read_replay,
)
from conformbench.runner.ledger.content import check_content, check_part, planned_items
from conformbench.runner.ledger.key import GenerationKey
from conformbench.runner.units import TaskPlan

try:
    import fcntl
except ImportError:  # Windows: runs are not guarded against each other
    fcntl = None  # type: ignore[assignment]

__all__ = ["Shard", "fold_shards", "locked", "main_generations", "shard_files"]

_SHARD_TEXT = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")
_SHARD_FILE = re.compile(r"^replay\.shard-(\d+)-of-(\d+)\.jsonl$")


@dataclass(frozen=True)
class Shard:
    """Part ``index`` (1-based) of ``count``."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        match = _SHARD_TEXT.match(text)
        if match is None:
            raise UsageError(f"--shard {text!r}: expected K/N, e.g. 1/2")
        index, count = int(match[1]), int(match[2])
        if not 1 <= index <= count:
            raise UsageError(f"--shard {text!r}: K must be between 1 and N")
        return cls(index, count)

    def owns(self, task: str, item_id: str) -> bool:
        """Whether the item falls to this part: a stable hash, the same in
        every process and on every machine (Python's ``hash`` is salted)."""
        digest = hashlib.sha256(f"{task}\0{item_id}".encode()).digest()
        return int.from_bytes(digest[:8], "big") % self.count == self.index - 1

    def path(self, out: Path) -> Path:
        return out / f"replay.shard-{self.index}-of-{self.count}.jsonl"

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def shard_files(out: Path) -> list[Path]:
    """The part files in a run folder, in part order."""
    found = []
    for path in out.glob("replay.shard-*-of-*.jsonl"):
        match = _SHARD_FILE.match(path.name)
        if match is not None:
            found.append(((int(match[2]), int(match[1])), path))
    return [path for _, path in sorted(found)]


@contextmanager
def locked(path: Path, what: str, shared: bool = False) -> Iterator[None]:
    """Hold an advisory lock for the replay file ``path``; fail at once,
    naming ``what`` holds it, when another process does."""
    if fcntl is None:
        yield
        return
    lock = path.with_name(f".{path.name}.lock")
    try:  # O_NOFOLLOW: a link planted at the lock's name is refused, its target never created
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0), 0o644)
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise  # a read-only folder, a full disk: the command's own one line
        raise UsageError(f"refusing to open the lock {lock}: it is a link (a planted link is never followed)") from None
    handle: IO[bytes] = os.fdopen(fd, "ab")
    try:
        try:
            fcntl.flock(handle.fileno(), (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UsageError(f"{path} is in use by {what}; wait for it to finish") from None
        except OSError as exc:  # a file system without locks: run unguarded
            if exc.errno not in (errno.ENOLCK, errno.EOPNOTSUPP):
                raise
        yield
    finally:
        handle.close()


def main_generations(path: Path, now: ReplayHeader, plans: list[TaskPlan]) -> list[GenerationRecord]:
    """What a part skips: the generations of ``OUT/replay.jsonl`` (none when
    there is no such file), which must be of the part's own spec and items."""
    if not path.exists():
        return []
    with locked(path, "an unsharded run", shared=True):
        contents = read_replay(path, links=False)
    if GenerationKey.of(contents.header.spec) != GenerationKey.of(now.spec):
        raise UsageError(
            f"{path} holds a run of a different spec: run it without --shard first (it resumes, "
            "grows or, with --force, moves it aside), or use another --out"
        )
    check_content(contents, now, plans)
    return [g for g in contents.generations if g.finish_reason != "error"]


def _check_spec(contents: ReplayContents, target: ReplayHeader) -> None:
    if GenerationKey.of(contents.header.spec) != GenerationKey.of(target.spec):
        raise UsageError(
            f"{contents.path} holds a part of a different spec; finish it with that spec "
            "(or delete it) before running this one"
        )
    check_content(contents, target, None)


def _check_content(parts: list[ReplayContents], main: ReplayContents | None, plans: Iterable[TaskPlan],
                   planned: bool) -> None:
    """Each part's items against the main replay's, the plan's (``planned``:
    the plan is of the parts' spec) and the parts' before it."""
    known: dict[tuple[str, str], tuple[Item, str]] = {}
    if main is not None:
        known.update({(r.task, r.item.id): (r.item, str(main.path)) for r in main.items})
    if planned:
        for key, item in planned_items(plans).items():
            known.setdefault(key, (item, "the plan (the dataset as it is now)"))
    for part in parts:
        check_part(part, known)


def _append(writer: ReplayWriter, parts: list[ReplayContents], done: set[tuple[str, str, str, str]],
            items: set[tuple[str, str]], merged: ReplayContents, order: Mapping[tuple[str, str], int]) -> int:
    """Write what the parts add, recording it in ``merged`` as written:
    items and generations in the run's item order (``order``: (task, item
    id) -> position; the parts each hold every N-th item), as an unsharded
    run writes them, so the ledger lists items in the same order."""
    def position(task: str, item_id: str) -> int:
        return order.get((task, item_id), len(order))

    for model in (m for part in parts for m in part.models):
        writer.write(model)
        merged.models.append(model)
    new_items = sorted((i for part in parts for i in part.items), key=lambda r: position(r.task, r.item.id))
    for item in new_items:
        if (item.task, item.item.id) not in items:
            writer.write(item)
            merged.items.append(item)
            items.add((item.task, item.item.id))
    folded = 0
    gens = sorted((g for part in parts for g in part.generations), key=lambda g: position(g.task, g.item_id))
    for gen in gens:
        if gen.key in done:
            continue
        writer.write(gen)
        merged.generations.append(gen)
        done.add(gen.key)
        folded += 1
    return folded


def item_order(plans: Iterable[TaskPlan]) -> dict[tuple[str, str], int]:
    """(task, item id) -> the item's position in its task: the order an
    unsharded run writes items in."""
    return {(plan.task.name, item.id): n for plan in plans for n, item in enumerate(plan.items)}


def fold_shards(out: Path, header: ReplayHeader, plans: list[TaskPlan]) -> tuple[int, ReplayContents | None]:
    """Append every part's records that ``OUT/replay.jsonl`` lacks to it
    (creating it with ``header`` when there is none) and delete the parts;
    returns the number of generations added and the folded replay's contents
    (None when nothing was folded), so the caller need not read it again. A
    part of another spec or content, or one still being written, is an error
    and nothing is folded. Where ``OUT/replay.jsonl`` is of another spec than
    ``header``'s, parts of its own spec are folded into it (the caller then
    grows it, refuses it or moves it aside: a grown run generates only what
    it adds, and no part of the old spec is left behind to block the next
    run); parts of any other spec are left as they are."""
    parts = shard_files(out)
    if not parts:
        return 0, None
    path = out / REPLAY_NAME
    main = read_replay(path, links=False) if path.exists() else None
    target = main.header if main is not None else header
    other = GenerationKey.of(target.spec) != GenerationKey.of(header.spec)
    with ExitStack() as held:
        for part_path in parts:
            held.enter_context(locked(part_path, "a sharded run"))
        contents = [read_replay(p, links=False) for p in parts]
        if other and any(GenerationKey.of(c.header.spec) != GenerationKey.of(target.spec) for c in contents):
            return 0, None  # the caller's usual check reports the different spec
        for part in contents:
            _check_spec(part, target)
        _check_content(contents, main, plans, planned=not other)
        writer = (ReplayWriter.resume(path, main.good_size) if main is not None
                  else ReplayWriter.create(path, header))
        done = {g.key for g in main.generations if g.finish_reason != "error"} if main else set()
        items = {(r.task, r.item.id) for r in main.items} if main else set()
        merged = main or ReplayContents(path, header)
        with writer:
            folded = _append(writer, contents, done, items, merged, item_order(plans))
    merged.generations, superseded = latest_generations(merged.generations)
    merged.superseded += superseded
    merged.good_size, merged.truncated_tail = path.stat().st_size, 0
    for part_path in parts:
        part_path.unlink()
    return folded, merged
