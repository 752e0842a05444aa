"""Growing a finished run's grid: more arms (a contract is part of an arm
spec: ``constrained[answer]``), engines, schema or output formats or shot
counts for some tasks.

Each generation belongs to one condition (arm, contract, engine, formats,
shots) of one item: a larger grid adds conditions and leaves the recorded
ones as they were, so their generations are reused and only the new
conditions' are generated (a new condition whose turn is a recorded one's
request takes it, as in a fresh run: ``runner.turns``). That is checked on
the conditions themselves, each task's recorded conditions against those it
has under the larger spec, not on the lists of names, because a task
crosses them in its own way (ConCodeEval's cells cross arms with formats).

Removing a condition is no growth (the replay would hold generations the
spec no longer names), nor is a change of the recipe of a recorded arm.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from conformbench.records.spec import ReplaySpec
from conformbench.runner.ledger.key import GRID_KEYS
from conformbench.runner.units import TaskPlan
from conformbench.tasks.base import tasks

__all__ = ["GridGrowth", "grid_growth"]


@dataclass
class GridGrowth:
    """What a larger grid adds to one task."""

    #: (key, recorded list, new list) of each grid key that changed
    changes: list[tuple[str, list[Any], list[Any]]] = field(default_factory=list)
    #: keys of the conditions the recorded run did not have
    added: list[str] = field(default_factory=list)

    def note(self, task: str) -> str:
        parts = []
        for key, old, new in self.changes:
            more = [v for v in new if v not in old]
            if old and new and all(v in new for v in old):
                parts.append(f"{key} added: {', '.join(str(v) for v in more)}")
            else:  # an empty list is the task's defaults, which the other may hold in part or whole
                parts.append(f"{key} {_shown(old)} -> {_shown(new)}")
        count = len(self.added)
        return f"task {task!r} {'; '.join(parts)} ({count} new condition{'s' * (count != 1)})"


def _shown(values: list[Any]) -> str:
    return json.dumps(values) if values else "(the task's defaults)"


def _conditions(spec: ReplaySpec, index: int) -> set[str]:
    task_spec = spec.tasks[index]
    task = tasks.get(task_spec.name)(spec.task_options(task_spec))
    return {c.key for c in task.conditions()}


def _reordered(was: list[Any], now: list[Any]) -> bool:
    """Whether the values of a recorded grid list stand in another order in
    the new one (an empty list is the task's defaults, in no order)."""
    return bool(was) and [value for value in now if value in was] != [v for v in was if v in now]


def grid_growth(old: ReplaySpec, new: ReplaySpec, plans: list[TaskPlan]) -> dict[str, GridGrowth] | None:
    """The tasks whose grid ``new`` grows over ``old`` (header specs that
    agree but for the grid, ``plans`` ``new``'s), by name; None when some
    task would lose a recorded condition, or names the values of a recorded
    list in another order (with or without new ones: a reordering is no
    growth, whatever else is added)."""
    grown: dict[str, GridGrowth] = {}
    for index, (before, after, plan) in enumerate(zip(old.tasks, new.tasks, plans, strict=True)):
        changes = [(k, list(getattr(before, k)), list(getattr(after, k))) for k in GRID_KEYS
                   if getattr(before, k) != getattr(after, k)]
        if not changes:
            continue
        if any(_reordered(was, now) for _, was, now in changes):
            return None  # a recorded list reordered, with or without new values: no growth
        recorded = _conditions(old, index)
        planned = [c.key for c in plan.conditions]
        if not recorded <= set(planned):
            return None
        added = [key for key in planned if key not in recorded]
        if not added:
            return None  # the same conditions under other lists (reordered): not a growth
        grown[after.name] = GridGrowth(changes, added)
    return grown
