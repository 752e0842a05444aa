"""The task interface. A task owns its items, the conditions it runs them
under, the prompts, and how one generation is scored. Runner and scoring are
generic over it; the arms (unconstrained, prompt_only, constrained,
reason_then_constrain) are defined once in ``conformbench.arms``.

Scoring reads replay files only: ``score`` must depend on nothing but the item
(stored in the replay), the condition and the generated text.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar

from conformbench.jsontypes import JSONValue, Schema
from conformbench.models.base import Prompt
from conformbench.registry import Registry

__all__ = [
    "Condition",
    "Item",
    "ItemScore",
    "KeywordViolation",
    "Task",
    "TaskOptions",
    "tasks",
]


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


@dataclass(frozen=True)
class KeywordViolation:
    """One violated JSON Schema keyword of a scored sample."""

    keyword: str
    schema_path: str
    instance_path: str
    #: begin | middle | end of the rendered schema the model saw (None if unknown)
    position: str | None = None


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


class Task(ABC):
    """Subclass, set ``name``, implement the abstract methods, decorate with
    ``@tasks.register(name)``. The constructor takes TaskOptions."""

    name: ClassVar[str]
    correctness_label: ClassVar[str] = "answer accuracy"
    #: contract schema names S this task offers, in order
    contracts: ClassVar[tuple[str, ...]] = ()
    #: the contract used by reason_then_constrain
    answer_contract: ClassVar[str | None] = None
    default_arms: ClassVar[tuple[str, ...]] = ()

    def __init__(self, options: TaskOptions) -> None:
        self.options = options

    @abstractmethod
    def items(self) -> list[Item]:
        """The items, deterministic for the options (n, seed, dataset)."""

    @abstractmethod
    def conditions(self) -> list[Condition]:
        """Every condition each item runs under."""

    @abstractmethod
    def prompt(self, item: Item, condition: Condition) -> Prompt:
        """The (first-turn) prompt of the item under the condition."""

    def contract_schema(self, item: Item, condition: Condition) -> Schema | None:
        """The JSON Schema of the condition's contract (None: no contract)."""
        return None

    def packaging_prompt(self, item: Item, condition: Condition, free_text: str) -> Prompt:
        """Second turn of reason_then_constrain: package the free text."""
        raise NotImplementedError(f"task {self.name} has no packaging turn")

    def stop_sequences(self, item: Item, condition: Condition) -> tuple[str, ...]:
        """Stop strings for the generation of ``item`` under ``condition``,
        added to the run's decoding settings. A backend ends the text before
        the first match (the stop string is not returned), so ``score`` must
        read a text cut there."""
        return ()

    @abstractmethod
    def score(self, item: Item, condition: Condition, text: str, truncated: bool) -> ItemScore:
        """Score one generated text. Must not raise on any text."""

    def execute(self, item: Item, answer: JSONValue) -> bool | None:
        """Optional execution check of an answer read from the output
        (executable accuracy, carried by ``ItemScore.executable``). None: the
        task has no execution check. ``answer`` is None when nothing could be
        read from the output."""
        return None

    def describe(self) -> dict[str, Any]:
        """Task facts for the report header."""
        return {"name": self.name, "correctness_label": self.correctness_label}


tasks: Registry[type[Task]] = Registry("task", "conformbench.tasks")
