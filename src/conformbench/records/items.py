"""Items, the conditions they run under, task options and per-generation
scores: the records every layer from tasks to reports shares."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import Field, GetCoreSchemaHandler
from pydantic_core import CoreSchema, core_schema

from conformbench.jsontypes import JSONValue
from conformbench.records.migrations import condition_from_v2

__all__ = ["CELL_AXES", "AxisValue", "Condition", "Item", "ItemScore", "KeywordViolation", "TaskOptions"]

#: the value of one grid axis of a condition (a format's name, a shot count...)
AxisValue = str | int

#: axes a condition's label shows as a format cell (``json->yaml``, then the
#: ``shots`` count as ``0shot``), as labels have always read; any other axis
#: shows as ``name=value``. A label only: every axis is stored in ``axes``
CELL_AXES = ("schema_format", "output_format", "shots")


@dataclass(frozen=True)
class Item:
    """One test item. ``input`` holds everything needed to build prompts and
    score (question, schema, sample...); ``target`` is the gold answer."""

    id: str
    input: dict[str, JSONValue]
    target: JSONValue = None
    meta: dict[str, JSONValue] = field(default_factory=dict)


@dataclass(frozen=True, order=True)
class Condition:
    """What varies between generations of one item: the arm, its contract
    and engine, and a value of each grid axis the task declares
    (``Task.axes``), read by name with ``axis(name)`` / ``axis_values``.

    ``arm`` is an arm registry name; ``contract`` names the task schema S of
    ``prompt_only[S]`` / ``constrained[S]``; ``engine`` is set for arms that
    apply a grammar. Every axis is a pair in ``axes``, in the task's
    declared order (left out of a replay when empty). Replays of layout 2
    and older stored the ConCodeEval tasks' axes in fields of their own: they
    read into ``axes`` (``migrations.condition_from_v2``). Build one
    from a mapping of axis values with ``Condition.of``.
    """

    arm: str
    contract: str | None = None
    engine: str | None = None
    axes: Annotated[tuple[tuple[str, AxisValue], ...], Field(exclude_if=lambda v: not v)] = ()
    #: the mode an arm's bracket names where the arm takes a mode, not a
    #: contract (``tools[required,strict]``: ``records.tool_calls``); left out
    #: of a replay when None, so conditions without one are what they were
    mode: Annotated[str | None, Field(exclude_if=lambda v: v is None)] = None

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        """Validated as the dataclass, after an older layout's fields are
        moved into ``axes`` (every record holding a condition reads both)."""
        return core_schema.no_info_before_validator_function(condition_from_v2, handler(source))

    @classmethod
    def of(cls, arm: str, contract: str | None = None, engine: str | None = None,
           axes: Mapping[str, AxisValue] | None = None, mode: str | None = None) -> Condition:
        """The condition with these axis values, in the mapping's order."""
        return cls(arm, contract, engine, axes=tuple((axes or {}).items()), mode=mode)

    @property
    def axis_values(self) -> dict[str, AxisValue]:
        """Every axis value this condition sets, by axis name."""
        return dict(self.axes)

    def axis(self, name: str) -> AxisValue | None:
        """The value of axis ``name`` (None where this condition has none)."""
        return self.axis_values.get(name)

    def text_axis(self, name: str) -> str | None:
        """The value of a named axis whose values are names (a format...)."""
        value = self.axis(name)
        return None if value is None else str(value)

    def count_axis(self, name: str) -> int:
        """The value of a counting axis (a shot count...), 0 where unset."""
        value = self.axis(name)
        return value if isinstance(value, int) else 0

    @property
    def arm_key(self) -> str:
        """'constrained[answer]@llguidance' (or 'tools[required,strict]') style label of the arm alone."""
        key = self.arm if self.contract is None else f"{self.arm}[{self.contract}]"
        key = key if self.mode is None else f"{key}[{self.mode}]"
        return key if self.engine is None else f"{key}@{self.engine}"

    @property
    def cell_key(self) -> str:
        """'json->yaml' style label of the format cell ('' when unused)."""
        sf, of = self.axis("schema_format"), self.axis("output_format")
        return "" if sf is None and of is None else f"{sf}->{of}"

    @property
    def key(self) -> str:
        """Unique, stable label of the whole condition."""
        cell = self.cell_key
        parts = [cell, f"{self.count_axis('shots')}shot"] if cell else []
        own = [f"{name}={value}" for name, value in self.axes if not (cell and name in CELL_AXES)]
        return "/".join([*parts, *own, self.arm_key])


@dataclass(frozen=True)
class TaskOptions:
    """Options of a task from the run spec. ``params`` holds task-specific
    options and ``axes`` the values of its spec-key axes; a task rejects
    keys it does not know (UsageError)."""

    n: int | None = None
    seed: int = 0
    arms: tuple[str, ...] = ()
    engines: tuple[str, ...] = ("llguidance",)
    #: the values the run chooses for each axis the task chooses by a key of
    #: its spec table (``tasks.grid.Axis``), by that key: ``{"schema_formats":
    #: ("json", "yaml"), "shots": (0, 3)}``; an axis left out takes the task's
    #: default. A task refuses a key none of its axes has (did-you-mean)
    axes: dict[str, tuple[AxisValue, ...]] = field(default_factory=dict)
    dataset: str | None = None
    params: dict[str, JSONValue] = field(default_factory=dict)
    #: a zero-shot run's replay whose errors pick the few-shot examples
    #: (ConCodeEval tasks; None: the static choice)
    shots_from: str | None = None
    #: scoring: check ``format`` (each draft's format vocabulary) instead of
    #: treating it as an annotation (JSON Schema 2020-12's default). Set by the
    #: scorer from the run spec or ``--format-assertion``; it never changes items
    format_assertion: bool = False

    @property
    def format_mode(self) -> Literal["assert", "annotate"]:
        """The validator's format mode this option selects (``FormatMode``)."""
        return "assert" if self.format_assertion else "annotate"


@dataclass(frozen=True)
class KeywordViolation:
    """One violated JSON Schema keyword of a scored sample."""

    keyword: str
    schema_path: str
    instance_path: str
    #: begin | middle | end of the rendered schema the model saw (None if unknown)
    position: str | None = None
    #: the validator's message (what a repair turn quotes); not compared
    message: str = field(default="", compare=False)


@dataclass(frozen=True)
class ItemScore:
    """How one generation scored. Rates are later taken over all N items.

    valid:   schema validity of the output (None = n/a: the arm has no contract)
    correct: answer accuracy (None where the task has no gold answer)
    parsed:  the output parsed in the requested format (IS% = not parsed)
    root_type_ok: the root data type matched (RTV% = False), None if unknown
    label / prediction: class labels for classification tasks (macro-F1)
    truncated: the generation hit max_tokens
    """

    valid: bool | None
    correct: bool | None
    parsed: bool = True
    root_type_ok: bool | None = None
    violations: tuple[KeywordViolation, ...] = ()
    label: str | None = None
    prediction: str | None = None
    executable: bool | None = None
    truncated: bool = False
    answer: JSONValue = None
    note: str | None = None
