"""The options tasks declare (``Task.options_model``), as the command
line, the API and a spec take them: each option of a task is a ``run``
flag in the task's help panel (``--NAME``; a list option, such as the one
choosing an axis's values, is repeatable), a keyword of ``conformbench.run``
and a key of the task's ``params`` table. Nothing here names a task: a
plugin task's options show up as its model declares them.

An option that is also a ``RunOptions`` field (``prompt_style``) keeps that
field's flag; reading the declarations imports every task's module, so the
API does it only for a keyword it does not know otherwise.

An axis a task chooses by a key of its spec table rather than by an option
of its model (``tasks.grid.Axis``: the ConCodeEval formats and shots) is a
``run`` flag and keyword too, declared on the axis (``declared_axis_options``);
its values travel in ``RunOptions.axes`` to that key of every chosen task's
table."""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass
from typing import Any

from conformbench.errors import UsageError
from conformbench.registry import did_you_mean
from conformbench.tasks.base import tasks
from conformbench.tasks.grid import Axis, option_fields

__all__ = ["AxisOption", "TaskOption", "apply_task_options", "axis_values", "declared_axis_options",
           "declared_task_options"]


@dataclass(frozen=True)
class TaskOption:
    """One option keyword and the tasks that declare it."""

    name: str
    tasks: tuple[str, ...]
    help: str
    #: the type a flag parses (str for a choice; ``list[X]`` for a list option)
    cli_type: Any

    @property
    def cli_flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def repeatable(self) -> bool:
        return typing.get_origin(self.cli_type) is list


def _cli_type(annotation: Any) -> Any:
    """An option's annotation as a flag parses it: lists stay lists, a
    Literal is its members' type, an optional drops None."""
    origin = typing.get_origin(annotation)
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if origin in (list, tuple, set, frozenset):
        return list[_cli_type(args[0]) if args else str]  # type: ignore[misc]
    if origin is typing.Literal:
        return type(args[0]) if args else str
    if origin in (typing.Union, types.UnionType) and len(args) == 1:
        return _cli_type(args[0])
    return annotation if isinstance(annotation, type) else str


def declared_task_options(skip: frozenset[str] = frozenset()) -> dict[str, TaskOption]:
    """Every option a registered task declares, by keyword (one keyword
    several tasks declare is one option), leaving out ``skip`` (names taken
    by ``RunOptions``)."""
    owners: dict[str, list[tuple[str, Any]]] = {}
    for name in tasks.names():
        for option, field in option_fields(tasks.get(name).options_model).items():
            if option not in skip:
                owners.setdefault(option, []).append((name, field))
    return {option: TaskOption(option, tuple(t for t, _ in found), found[0][1].description or "",
                               _cli_type(found[0][1].annotation))
            for option, found in owners.items()}


@dataclass(frozen=True)
class AxisOption:
    """One spec-key axis as a run takes it (a flag and a keyword named
    ``axis.option``), and the tasks that declare it."""

    axis: Axis
    tasks: tuple[str, ...]


def declared_axis_options() -> dict[str, AxisOption]:
    """Every spec-key axis a registered task declares (one its model does
    not choose), by its option (several tasks declaring one are one), in
    the order the tasks declare them."""
    found: dict[str, AxisOption] = {}
    for name in tasks.names():
        task = tasks.get(name)
        for axis in task.axes:
            if axis.option not in option_fields(task.options_model):
                given = found.get(axis.option)
                found[axis.option] = AxisOption(axis, (*given.tasks, name) if given else (name,))
    return found


def axis_values(option: str, value: object, declared: dict[str, AxisOption]) -> tuple[str | int, ...]:
    """``value`` (one value or a list of them) as the tuple the axis chosen
    by ``option`` takes; a UsageError naming what it takes otherwise, or,
    for an option no task declares, the ones that are."""
    if option not in declared:
        known = list(declared)
        raise UsageError(f"no task has an axis chosen by {option!r}{did_you_mean(option, known)}; "
                         f"known: {', '.join(known) or 'none'}")
    kind = declared[option].axis.value_type
    values = [value] if isinstance(value, str | int) else value
    if not isinstance(values, list | tuple) or not all(
            isinstance(v, kind) and not isinstance(v, bool) for v in values):
        raise UsageError(f"run option {option}: expected a {kind.__name__} or a list of them, not {value!r}")
    return tuple(values)


def _declares(task: str, option: str) -> bool:
    return task in tasks and option in tasks.get(task).option_names()


def apply_task_options(chosen: list[dict[str, Any]], given: dict[str, Any]) -> None:
    """Put each given task option in the ``params`` of every chosen task
    that declares it; an option none of them declares is refused, naming
    the tasks that do."""
    for option, value in given.items():
        takers = [t for t in chosen if _declares(str(t.get("name")), option)]
        if not takers:
            owners = [n for n in tasks.names() if _declares(n, option)]
            where = " or ".join(f"task {n} (--task {n})" for n in owners) or "no task"
            raise UsageError(f"task option {option!r} applies to {where}, not to "
                             f"{', '.join(str(t.get('name')) for t in chosen) or 'no task'}")
        for task in takers:
            params = task.get("params")
            stored = list(value) if isinstance(value, tuple) else value
            task["params"] = {**(params if isinstance(params, dict) else {}), option: stored}

