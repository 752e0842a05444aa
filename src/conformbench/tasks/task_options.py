"""The options tasks declare (``Task.options_model``), as the command
line, the API and a spec take them: each option of a task is a ``run``
flag in the task's help panel (``--NAME``; a list option, such as the one
choosing an axis's values, is repeatable), a keyword of ``conformbench.run``
and a key of the task's ``params`` table. Nothing here names a task: a
plugin task's options show up as its model declares them.

An option that is also a ``RunOptions`` field (``prompt_style``) keeps that
field's flag; reading the declarations imports every task's module, so the
API does it only for a keyword it does not know otherwise."""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass
from typing import Any

from conformbench.errors import UsageError
from conformbench.tasks.base import tasks
from conformbench.tasks.grid import option_fields

__all__ = ["TaskOption", "apply_task_options", "declared_task_options"]


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

