"""``RunKeywords`` is the static mirror of ``RunOptions`` (mypy cannot read a
TypedDict built at run time): every keyword's type must be its field's
type as the API takes it, by one rule, so the two cannot drift apart."""

from __future__ import annotations

import dataclasses
import os
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from conformbench.runner.run_options import RunKeywords, RunOptions


def keyword_type(field_type: Any) -> Any:
    """What ``conformbench.run`` takes for a ``RunOptions`` field of this
    type (``api._checked``): a list option also takes one value, a path
    also a str or any PathLike; everything else as the field holds it."""
    if typing.get_origin(field_type) is tuple:
        member = typing.get_args(field_type)[0]
        return member | Sequence[member]
    args = typing.get_args(field_type)
    if Path in args:
        return typing.Union[tuple(str | os.PathLike[str] if a is Path else a for a in args)]  # noqa: UP007
    return field_type


def test_each_keyword_has_its_fields_type_as_the_api_takes_it() -> None:
    """A keyword of RunOptions' fields, or of a shipped task's spec-key axis
    (carried in ``RunOptions.axes``), typed as its axis declares its values."""
    from conformbench.tasks.task_options import declared_axis_options

    fields = typing.get_type_hints(RunOptions)
    axes = {key: tuple[declared.axis.value_type, ...]  # type: ignore[name-defined]
            for key, declared in declared_axis_options().items()}
    fields.update(axes)
    keywords = typing.get_type_hints(RunKeywords)
    own = {f.name for f in dataclasses.fields(RunOptions)} - {"backend_options", "task_options", "axes"}
    assert set(keywords) == own | set(axes)
    wrong = {name: (keywords[name], keyword_type(fields[name])) for name in keywords
             if keywords[name] != keyword_type(fields[name])}
    assert wrong == {}


def test_the_rule_tells_a_drifted_keyword() -> None:
    """The check above can fail: a keyword typed unlike its field is told."""
    assert keyword_type(tuple[str, ...]) == str | Sequence[str]
    assert keyword_type(Path | None) == str | os.PathLike[str] | None
    assert keyword_type(int | None) == int | None
    assert keyword_type(tuple[int, ...]) != str | Sequence[str]


def test_no_tasks_axis_is_a_field_of_the_generic_records() -> None:
    """A task's axes reach the run through ``RunOptions.axes`` and
    ``TaskOptions.axes`` (or its own options model), so adding a task with
    an axis edits neither record (#50)."""
    from conformbench.records.items import TaskOptions
    from conformbench.tasks.base import tasks

    options = {axis.option for name in tasks.names() for axis in tasks.get(name).axes}
    assert {"schema_formats", "output_formats", "shots"} <= options
    assert not options & {f.name for f in dataclasses.fields(RunOptions)}
    assert not options & {f.name for f in dataclasses.fields(TaskOptions)}
