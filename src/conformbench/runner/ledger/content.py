"""Content, not names: what a resume, a growth or a fold checks before it
reuses a recorded generation.

A generation is an answer to one item, and an item is known by its id only
within one dataset. So every item record of a replay (or of a part) is
compared with the plan's item of that id, the parts' records with each
other and with the main replay's, and each generation must have its item
record beside it; a dataset's content digest, recorded beside its path,
tells a changed file from the one the run was made with. A mismatch is
refused in one line naming the item and both sources."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from pathlib import Path

from conformbench.errors import UsageError
from conformbench.records.items import Item
from conformbench.records.replay import ReplayHeader
from conformbench.records.replay_file import ReplayContents
from conformbench.records.spec import ReplaySpec
from conformbench.runner.units import TaskPlan

__all__ = ["check_content", "check_dataset", "check_items", "check_part", "check_versions", "dataset_digest",
           "planned_items"]

ItemKey = tuple[str, str]


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
        if item is None or not item.same_as(rec.item):
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
        if found is not None and not found[0].same_as(rec.item):
            raise UsageError(f"item {rec.item.id!r} of task {rec.task!r} differs between {part.path} and {found[1]} "
                             "(its dataset changed under the same ids?); nothing was folded")
        known.setdefault(key, (rec.item, str(part.path)))
        own.add(key)
    for gen in part.generations:
        if (gen.task, gen.item_id) not in own:
            raise UsageError(f"item {gen.item_id!r} of task {gen.task!r} has generations in {part.path} but no "
                             "item record there, so what they answered is unknown; nothing was folded")
