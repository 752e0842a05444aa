"""Content, not names: what a resume, a growth or a fold checks before it
reuses a recorded generation.

A generation is an answer to one item, and an item is known by its id only
within one dataset. So every item record of a replay (or of a part) is
compared with the plan's item of that id, the parts' records with each
other and with the main replay's, and each generation must have its item
record beside it; a dataset's content digest, recorded beside its path,
tells a changed file from the one the run was made with. A mismatch is
refused in one line naming the item and both sources.

Scoring reuses answers too: ``score A B`` merges replays, so an item id
must mean one item across them (``replay_items``), and ``--against`` pairs
two decodings only on the items both hold (``paired_items``). Scoring is
given the checked items and compares none itself."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from conformbench.errors import UsageError
from conformbench.records.items import Item
from conformbench.records.replay import ReplayHeader
from conformbench.records.replay_file import ReplayContents, read_replay
from conformbench.records.spec import ReplaySpec
from conformbench.runner.units import TaskPlan

__all__ = ["ReplayItems", "check_content", "check_dataset", "check_items", "check_part", "check_versions",
           "checked_replays", "dataset_digest", "paired_items", "planned_items", "replay_items", "same_item"]

ItemKey = tuple[str, str]
#: a replay's items, by task and id
ReplayItems = dict[str, dict[str, Item]]


def same_item(one: Item, other: Item) -> bool:
    """Whether two records of an item are the one item (id, question,
    schema, target, meta): the one comparison of item records, wherever
    answers are reused or merged (a resume, a growth, a fold, ``score A
    B``). Field by field, and as JSON text too, since a NaN read twice is
    two unequal floats."""
    def fields(item: Item) -> tuple[object, ...]:
        return tuple(getattr(item, f.name) for f in dataclasses.fields(item))

    def text(item: Item) -> str:
        return json.dumps(dataclasses.asdict(item), sort_keys=True, default=str)
    return fields(one) == fields(other) or text(one) == text(other)


def _file_digest(path: Path) -> bytes:
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").digest()


def dataset_digest(named: str) -> str | None:
    """The sha256 of a dataset's content: a file's bytes, or a folder's
    files (names and bytes, in name order, links not followed); None when
    there is nothing to read (the task refuses it in its own words)."""
    path = Path(named)
    digest = hashlib.sha256()
    try:
        if path.is_file():
            return _file_digest(path).hex()
        if not path.is_dir():
            return None
        for child in sorted(p for p in path.rglob("*") if p.is_file() and not p.is_symlink()):
            digest.update(str(child.relative_to(path)).encode("utf-8", "surrogateescape") + b"\0")
            digest.update(_file_digest(child))
    except OSError:
        return None
    return digest.hexdigest()


def check_dataset(recorded: ReplaySpec, now: ReplaySpec, where: object) -> None:
    """Refuse to reuse ``where``'s generations when a task's dataset content
    differs from the one they were made with (a digest on both sides)."""
    for old in recorded.tasks:
        new = next((t for t in now.tasks if t.name == old.name), None)
        if new is None or not old.dataset_sha256 or not new.dataset_sha256:
            continue
        if old.dataset_sha256 != new.dataset_sha256:
            raise UsageError(f"task {old.name!r}: the dataset {new.dataset} is not the content {where} was made "
                             f"with (sha256 {old.dataset_sha256[:12]}… there, {new.dataset_sha256[:12]}… now); "
                             "use a new --out directory")


def check_versions(recorded: ReplayHeader, now: ReplayHeader, where: object) -> None:
    """Refuse to reuse ``where``'s generations when a task's version (its
    items, prompts or checker) differs from the one they were made with
    (a version on both sides: older headers recorded none)."""
    for task, was in recorded.task_versions.items():
        new = now.task_versions.get(task)
        if new is not None and new != was:
            raise UsageError(f"task {task!r}: {where} was made with version {was} of the task, this conformbench "
                             f"has version {new}; use a new --out directory (score still reads the replay)")


def check_content(contents: ReplayContents, now: ReplayHeader, plans: Iterable[TaskPlan] | None) -> None:
    """Refuse to reuse ``contents`` for the run whose header is ``now``: a
    task's version or its dataset's content changed, or (given the
    ``plans``) a recorded item is not the plan's item of its id."""
    check_versions(contents.header, now, contents.path)
    check_dataset(contents.header.spec, now.spec, contents.path)
    if plans is not None:
        check_items(contents, planned_items(plans))


def planned_items(plans: Iterable[TaskPlan]) -> dict[ItemKey, Item]:
    return {(p.task.name, item.id): item for p in plans for item in p.items}


def check_items(contents: ReplayContents, planned: Mapping[ItemKey, Item], source: str = "the plan") -> None:
    """Every item record of ``contents`` is the item ``planned`` holds under
    its id (a recorded item the plan lacks: its generations cannot be
    reused either)."""
    for rec in contents.items:
        item = planned.get((rec.task, rec.item.id))
        if item is None or not same_item(item, rec.item):
            where = f"is in {contents.path} but not in" if item is None else f"differs between {contents.path} and"
            raise UsageError(f"item {rec.item.id!r} of task {rec.task!r} {where} {source}, "
                             "so its generations cannot be reused; use a new --out directory")


def check_part(part: ReplayContents, known: dict[ItemKey, tuple[Item, str]]) -> None:
    """A part's item records agree with those ``known`` (item key -> item
    and where it is recorded: the plan, the main replay, parts folded
    before), which they join; each of its generations has its item record
    in the part."""
    own: set[ItemKey] = set()
    for rec in part.items:
        key = (rec.task, rec.item.id)
        found = known.get(key)
        if found is not None and not same_item(found[0], rec.item):
            raise UsageError(f"item {rec.item.id!r} of task {rec.task!r} differs between {part.path} and {found[1]} "
                             "(its dataset changed under the same ids?); nothing was folded")
        known.setdefault(key, (rec.item, str(part.path)))
        own.add(key)
    for gen in part.generations:
        if (gen.task, gen.item_id) not in own:
            raise UsageError(f"item {gen.item_id!r} of task {gen.task!r} has generations in {part.path} but no "
                             "item record there, so what they answered is unknown; nothing was folded")


def _shown(text: str, limit: int = 80) -> str:
    """An id from a file, for a one-line message: repr (no control
    characters), cut to ``limit`` characters."""
    shown = ascii(text)
    return shown if len(shown) <= limit else shown[:limit] + "..."


def _own_items(contents: ReplayContents) -> ReplayItems:
    """The replay's items per task; an id recorded twice with another item
    (question, schema or target) is refused: every answer to it would be
    scored against one of them."""
    items: ReplayItems = {}
    for rec in contents.items:
        by_id = items.setdefault(rec.task, {})
        old = by_id.get(rec.item.id)
        if old is not None and not same_item(old, rec.item):
            raise UsageError(f"{contents.path}: item {rec.task}/{_shown(rec.item.id)} is recorded twice "
                             "with different contents (question, schema or target)")
        by_id[rec.item.id] = rec.item
    return items


def replay_items(read: Sequence[ReplayContents]) -> list[ReplayItems]:
    """Each replay's items (``score A B``, a split run): an item id means one
    item across every replay merged, so an id another replay holds with
    another question, schema or target is refused, not scored against the
    other's item."""
    known: dict[ItemKey, tuple[Item, Path]] = {}
    out: list[ReplayItems] = []
    for contents in read:
        items = _own_items(contents)
        for task, by_id in items.items():
            for item_id, item in by_id.items():
                old, where = known.setdefault((task, item_id), (item, contents.path))
                if old is not item and not same_item(old, item):
                    raise UsageError(f"item {task}/{_shown(item_id)} of {contents.path} is not the item of the "
                                     f"same id in {where} (question, schema or target differ): these replays are "
                                     "of different items and cannot be merged")
        out.append(items)
    return out


def checked_replays(paths: Sequence[Path]) -> list[tuple[ReplayContents, ReplayItems]]:
    """The replays at ``paths``, read, each with its items checked
    (``replay_items``): what scoring merges."""
    read = [read_replay(path) for path in paths]
    return list(zip(read, replay_items(read), strict=True))


def _same_input(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """The same item input, but that a mapping value (the ConCodeEval
    items' ``renderings``) may hold on one side only the entries of the
    formats its run asked for."""
    if a.keys() != b.keys():
        return False
    for key, x in a.items():
        y = b[key]
        if x == y:
            continue
        if not (isinstance(x, dict) and isinstance(y, dict)):
            return False
        small, large = (x, y) if len(x) <= len(y) else (y, x)
        if any(k not in large or large[k] != v for k, v in small.items()):
            return False
    return True


def _first_items(side: Sequence[ReplayItems]) -> dict[ItemKey, Item]:
    first: dict[ItemKey, Item] = {}
    for items in side:
        for task, by_id in items.items():
            for item_id, item in by_id.items():
                first.setdefault((task, item_id), item)
    return first


def paired_items(one: Sequence[ReplayItems], other: Sequence[ReplayItems]) -> frozenset[ItemKey]:
    """The (task, id) of the items both sides hold as one item (``--against``,
    ``reproduce``): same id, target and input, but that a run asked for
    fewer schema formats stores fewer renderings."""
    mine, theirs = _first_items(one), _first_items(other)
    return frozenset(key for key, item in mine.items()
                     if (their := theirs.get(key)) is not None
                     and _same_input(item.input, their.input) and item.target == their.target)
