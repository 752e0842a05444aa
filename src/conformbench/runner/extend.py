"""Growing a finished run: the same spec with a larger ``n`` for some tasks.

A replay's header holds the spec it was made under, and a resumed run must
match it. The one change that keeps every recorded generation meaningful is
asking for more items of the same tasks: the items already run are the first
ones of the larger set, so their generations are reused and only the new
items are generated. That is checked on the items themselves (each recorded
item must be identical to the planned item with its id), not assumed from the
spec, because a task's item order could depend on ``n``.

The header is then rewritten (to a temporary file, fsync'd, renamed over the
replay) with the larger spec and a note of the change in ``grown``.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from typing import Any

from conformbench.errors import UsageError
from conformbench.records.replay import ReplayHeader
from conformbench.records.replay_file import ReplayContents
from conformbench.runner.units import TaskPlan

__all__ = ["grow_replay", "grown_tasks"]

_CHUNK = 1 << 20


def _without_n(spec: dict[str, Any]) -> dict[str, Any]:
    copy: dict[str, Any] = json.loads(json.dumps(spec))
    for task in copy.get("tasks", []):
        task.pop("n", None)
    return copy


def grown_tasks(old: dict[str, Any], new: dict[str, Any]) -> dict[str, tuple[int, int]]:
    """{task: (old n, new n)} when ``new`` is ``old`` with only some tasks'
    ``n`` raised; empty when the specs differ in any other way (or n shrinks
    or was unbounded)."""
    if _without_n(old) != _without_n(new):
        return {}
    grown: dict[str, tuple[int, int]] = {}
    for before, after in zip(old.get("tasks", []), new.get("tasks", [])):
        n_old, n_new = before.get("n"), after.get("n")
        if n_old == n_new:
            continue
        if n_old is None or n_new is None or n_new < n_old:
            return {}
        grown[str(after["name"])] = (int(n_old), int(n_new))
    return grown


def _check_items(contents: ReplayContents, plans: list[TaskPlan]) -> None:
    planned = {(p.task.name, item.id): item for p in plans for item in p.items}
    for rec in contents.items:
        item = planned.get((rec.task, rec.item.id))
        if item is None or item != rec.item:
            change = "is not in" if item is None else "differs in"
            raise UsageError(
                f"{contents.path}: item {rec.item.id!r} of task {rec.task!r} {change} the "
                "larger run, so its generations cannot be reused; use a new --out directory"
            )


def _rewrite(contents: ReplayContents, header: ReplayHeader) -> int:
    """Replace the header line; returns the new length of the complete lines."""
    path = contents.path
    tmp = path.with_name(path.name + ".growing")
    with path.open("rb") as src, tmp.open("wb") as dst:
        src.readline()  # the old header
        dst.write(header.model_dump_json().encode("utf-8") + b"\n")
        remaining = contents.good_size - src.tell()
        while remaining > 0:  # in chunks: a replay of a long run can be large
            chunk = src.read(min(remaining, _CHUNK))
            if not chunk:
                break
            dst.write(chunk)
            remaining -= len(chunk)
        dst.flush()
        os.fsync(dst.fileno())
        size = dst.tell()
    os.replace(tmp, path)
    return size


def grow_replay(contents: ReplayContents, new_spec: dict[str, Any],
                plans: list[TaskPlan]) -> dict[str, tuple[int, int]]:
    """If ``new_spec`` only raises some tasks' n over the replay's spec,
    check every recorded item against ``plans``, rewrite the header of
    ``contents`` (in place) to ``new_spec`` and return the growth
    ``{task: (old n, new n)}``; otherwise change nothing and return {}."""
    grown = grown_tasks(contents.header.spec, new_spec)
    if not grown:
        return {}
    _check_items(contents, plans)
    when = datetime.now(UTC).isoformat(timespec="seconds")
    notes = [f"{when}: task {name!r} n {a} -> {b}" for name, (a, b) in sorted(grown.items())]
    header = contents.header.model_copy(
        update={"spec": new_spec, "grown": [*contents.header.grown, *notes]})
    contents.good_size = _rewrite(contents, header)
    contents.header = header
    return grown
