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

import copy
import json
from dataclasses import dataclass, field
from typing import Any

from conformbench.records.spec import AXIS_KEYS, ReplaySpec
from conformbench.runner.units import TaskPlan
from conformbench.tasks.base import tasks

__all__ = ["GRID_KEYS", "GridGrowth", "grid_growth", "without_grid"]

#: the task keys whose lists make the task's conditions
GRID_KEYS = ("arms", "engines", *AXIS_KEYS)


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


def without_grid(spec: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    """``spec`` (a plain header spec, copied) without the keys a grid growth
    may change: each task's grid lists, the recipes of arms the recorded
    run (``old``) did not name, and the round limit where the recorded run
    had no multi-round arm (a header records none then: ``runner.spec``)."""
    out = copy.deepcopy(spec)
    for task in out.get("tasks", []):
        for key in GRID_KEYS:
            task.pop(key, None)
    recorded = old.get("arms", {})
    out["arms"] = {name: recipe for name, recipe in out.get("arms", {}).items() if name in recorded}
    if old.get("decoding", {}).get("max_rounds") is None:
        out.get("decoding", {}).pop("max_rounds", None)
    return out


def _conditions(spec: ReplaySpec, index: int) -> set[str]:
    task_spec = spec.tasks[index]
    task = tasks.get(task_spec.name)(spec.task_options(task_spec))
    return {c.key for c in task.conditions()}


def grid_growth(old: dict[str, Any], new: dict[str, Any],
                plans: list[TaskPlan]) -> dict[str, GridGrowth] | None:
    """The tasks whose grid ``new`` grows over ``old`` (both header specs
    that agree but for the grid, ``plans`` ``new``'s), by name; None when
    some task would lose a recorded condition."""
    old_spec = ReplaySpec.model_validate(old)
    grown: dict[str, GridGrowth] = {}
    for index, (before, after, plan) in enumerate(zip(old["tasks"], new["tasks"], plans, strict=True)):
        changes = [(k, list(before.get(k, [])), list(after.get(k, []))) for k in GRID_KEYS
                   if before.get(k, []) != after.get(k, [])]
        if not changes:
            continue
        recorded = _conditions(old_spec, index)
        planned = [c.key for c in plan.conditions]
        if not recorded <= set(planned):
            return None
        added = [key for key in planned if key not in recorded]
        if not added:
            return None  # the same conditions under other lists (reordered): not a growth
        grown[str(after["name"])] = GridGrowth(changes, added)
    return grown
