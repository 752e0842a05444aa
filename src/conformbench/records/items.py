"""Items, the conditions they run under, task options and per-generation
scores: the records every layer from tasks to reports shares."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from conformbench.jsontypes import JSONValue

__all__ = ["Condition", "Item", "ItemScore", "KeywordViolation", "TaskOptions"]


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
    """What varies between generations of one item.

    ``arm`` is an arm registry name; ``contract`` names the task schema S of
    ``prompt_only[S]`` / ``constrained[S]``; ``engine`` is set for arms that
    apply a grammar. ``schema_format``/``output_format``/``shots`` are used by
    the ConCodeEval tasks and left None/0 elsewhere.
    """

    arm: str
    contract: str | None = None
    engine: str | None = None
    schema_format: str | None = None
    output_format: str | None = None
    shots: int = 0

    @property
    def arm_key(self) -> str:
        """'constrained[answer]@llguidance' style label of the arm alone."""
        key = self.arm if self.contract is None else f"{self.arm}[{self.contract}]"
        return key if self.engine is None else f"{key}@{self.engine}"

    @property
    def cell_key(self) -> str:
        """'json->yaml' style label of the format cell ('' when unused)."""
        if self.schema_format is None and self.output_format is None:
            return ""
        return f"{self.schema_format}->{self.output_format}"

    @property
    def key(self) -> str:
        """Unique, stable label of the whole condition."""
        parts = [p for p in (self.cell_key, f"{self.shots}shot" if self.cell_key else "") if p]
        return "/".join([*parts, self.arm_key])


@dataclass(frozen=True)
class TaskOptions:
    """Options of a task from the run spec. ``params`` holds task-specific
    options; a task rejects keys it does not know (UsageError)."""

    n: int | None = None
    seed: int = 0
    arms: tuple[str, ...] = ()
    engines: tuple[str, ...] = ("llguidance",)
    schema_formats: tuple[str, ...] = ()
    output_formats: tuple[str, ...] = ()
    shots: tuple[int, ...] = (0,)
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
