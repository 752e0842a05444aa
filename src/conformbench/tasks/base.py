"""The task interface. A task owns its items, the conditions it runs them
under, the prompts, and how one generation is scored. Runner and scoring are
generic over it; the arms (unconstrained, prompt_only, constrained,
reason_then_constrain) are defined once in ``conformbench.arms``.

Scoring reads replay files only: ``score`` must depend on nothing but the item
(stored in the replay), the condition and the generated text.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar, TypeVar, cast

from pydantic import BaseModel

from conformbench.arms.base import answer_kind
from conformbench.errors import UsageError
from conformbench.jsontypes import JSONValue, Schema
from conformbench.records.generation import TurnBudgets
from conformbench.records.items import AxisValue, Condition, Item, ItemScore, TaskOptions
from conformbench.records.prompt import Prompt
from conformbench.records.rounds import ErrorNote, TurnKind, Verdict
from conformbench.registry import Registry, did_you_mean
from conformbench.tasks.grid import Axis, arm_conditions, axis_grid, checked_params, option_fields

__all__ = ["Axis", "Task", "tasks", "zero_by_definition"]

_T = TypeVar("_T", str, int)


class Task(ABC):
    """Subclass, set ``name``, implement the abstract methods, decorate with
    ``@tasks.register(name)``. The constructor takes TaskOptions and checks
    its ``params`` against the task's declared options (``options_model``)."""

    name: ClassVar[str]
    #: the task's version, recorded in each replay's header
    #: (``ReplayHeader.task_versions``): raise it when a change to the items,
    #: prompts or checker changes what the task measures, so that ``score``
    #: says a replay was made with another version, and a resume refuses to
    #: mix the two
    version: ClassVar[int] = 1
    #: what "correct" means in reports; an instance may set its own (custom: its matcher)
    correctness_label: str = "answer accuracy"
    #: rates 0 by this task's definition, not by measurement (the terminal
    #: leaves them out; a measured 0 is always shown)
    zero_by_definition: ClassVar[frozenset[str]] = frozenset()
    #: contract schema names S this task offers, in order
    contracts: ClassVar[tuple[str, ...]] = ()
    #: the contract used by reason_then_constrain
    answer_contract: ClassVar[str | None] = None
    default_arms: ClassVar[tuple[str, ...]] = ()
    #: token budget of each turn unless the run spec sets one: validbutwrong's
    #: 384 per turn, so an answer is cut by the model, not by our settings
    default_budgets: ClassVar[TurnBudgets] = TurnBudgets(free=384, json=384, packaging=384)
    #: task-specific option names accepted in ``TaskOptions.params`` (a
    #: scoring param such as custom's ``match`` is rescored by ``score --match``
    #: only for a task that names it here)
    known_params: ClassVar[tuple[str, ...]] = ()
    #: the task's own options, typed and checked (a ``tasks.grid.TaskParams``
    #: model; each field a ``run`` flag, an API keyword and a ``params`` key)
    options_model: ClassVar[type[BaseModel] | None] = None
    #: the grid's axes beyond arm × contract × engine (``tasks.grid.Axis``):
    #: each condition takes one value of each
    axes: ClassVar[tuple[Axis, ...]] = ()
    #: the prompt shows the item's schema and ``attention_text`` returns it:
    #: ``--attention`` (where the answer position attends in the schema) runs
    #: only on a task that declares this (the ConCodeEval tasks)
    shows_schema: ClassVar[bool] = False

    def __init__(self, options: TaskOptions) -> None:
        self.options = options
        #: ``params`` as the options model read them (None without a model)
        self.task_params = checked_params(self.name, self.options_model, self.known_params, options.params)
        keys = self.axis_keys()
        for key, values in options.axes.items():  # an empty choice is none: the task's default
            if values and key not in keys:
                axes = ", ".join(f"{a.name} (by {a.option})" for a in self.axes) or "none beyond arm, contract, engine"
                raise UsageError(f"task {self.name} has no axis chosen by {key!r}{did_you_mean(key, list(keys))}; "
                                 f"its axes: {axes}")
        if options.shots_from is not None and "shots" not in keys:
            raise UsageError(f"task {self.name} takes no few-shot examples (shots_from)")

    @classmethod
    def axis_keys(cls) -> tuple[str, ...]:
        """The spec keys that choose an axis's values (``TaskOptions.axes``):
        the options of the axes its options model does not declare."""
        model = option_fields(cls.options_model)
        return tuple(axis.option for axis in cls.axes if axis.option not in model)

    def given_axis(self, key: str, kind: type[_T]) -> tuple[_T, ...]:
        """The values the run gives the axis chosen by spec key ``key``
        (empty: none given, the task's default), each a ``kind``."""
        values = self.options.axes.get(key, ())
        for value in values:
            if not isinstance(value, kind) or isinstance(value, bool):
                raise UsageError(f"task {self.name}: {key}: expected {kind.__name__} values, not {value!r}")
        return cast("tuple[_T, ...]", tuple(values))

    @classmethod
    def option_names(cls) -> tuple[str, ...]:
        """Every ``params`` key the task takes: its model's options, then
        the untyped ``known_params``."""
        return (*option_fields(cls.options_model), *cls.known_params)

    @abstractmethod
    def items(self) -> list[Item]:
        """The items, deterministic for the options (n, seed, dataset)."""

    def arm_specs(self) -> tuple[str, ...]:
        """The arm specs this run gives the task ('constrained[answer]', …)."""
        return self.options.arms or self.default_arms

    def axis_choices(self) -> dict[str, tuple[AxisValue, ...]]:
        """Each axis's values in this run (read from the option it names)."""
        out: dict[str, tuple[AxisValue, ...]] = {}
        for axis in self.axes:
            if axis.option in option_fields(self.options_model):
                out[axis.name] = tuple(getattr(self.task_params, axis.option))
            else:
                out[axis.name] = tuple(self.options.axes.get(axis.option, ()))
        return out

    def conditions(self) -> list[Condition]:
        """Every condition each item runs under: each point of the axes ×
        each arm spec × its contracts × the run's engines."""
        out: dict[Condition, None] = {}
        for point in axis_grid(self.axis_choices()):
            for spec in self.arm_specs():
                out.update(dict.fromkeys(arm_conditions(self, spec, point)))
        if not out:
            raise UsageError(f"task {self.name}: no condition applies to these arms and axes")
        return list(out)

    @abstractmethod
    def turn_prompt(self, item: Item, condition: Condition, kind: TurnKind) -> Prompt:
        """The prompt of a turn of ``kind`` in ``condition`` (the arm's own
        condition, never another arm's): "free" (the free prompt, no contract
        asked), "ask" (the condition's contract asked for in the prompt) or
        "constrained" (the prompt the same turn has under the grammar). A
        package or think turn has its own hook (``packaging_prompt``,
        ``thinking_prompt``); a feedback turn extends an earlier one."""

    def prompt(self, item: Item, condition: Condition) -> Prompt:
        """The prompt of the condition's one answer as a one-answer arm asks
        it (``answer_kind``): what an importer or an Inspect task sends."""
        return self.turn_prompt(item, condition, answer_kind(condition))

    def cell_exclusion(self, item: Item, condition: Condition) -> str | None:
        """Why ``item`` has no generation under ``condition`` (the runner
        records the pair as excluded with this reason and sends nothing),
        or None. E.g. a schema without a rendering in the condition's
        schema format: its other conditions run as usual."""
        return None

    def contract_schema(self, item: Item, condition: Condition) -> Schema | None:
        """The JSON Schema of the condition's contract (None: no contract)."""
        return None

    def contract_form(self, item: Item, condition: Condition) -> str:
        """The output format a grammar forces the contract's answer into
        (an output format name); JSON unless the task's answers take the
        condition's own output format (ConCodeEval generation)."""
        return "json"

    def packaging_prompt(self, item: Item, condition: Condition, free_text: str) -> Prompt:
        """Second turn of reason_then_constrain: package the free text."""
        raise NotImplementedError(f"task {self.name} has no packaging turn")

    def thinking_prompt(self, item: Item, condition: Condition, stop: str) -> Prompt:
        """think_then_constrain's one prompt: think, write ``stop``, then answer."""
        raise NotImplementedError(f"task {self.name} has no thinking prompt")

    def turn_stops(self, item: Item, condition: Condition, kind: TurnKind) -> tuple[str, ...]:
        """Stop strings of a turn of ``kind`` (any kind but "feedback", which
        keeps its earlier turn's) in ``condition``, added to the run's
        decoding settings. A backend ends the text before the first match
        (the stop string is not returned), so ``score`` must read a text cut
        there."""
        return ()

    def stop_sequences(self, item: Item, condition: Condition) -> tuple[str, ...]:
        """The stop strings of the condition's one answer (``answer_kind``)."""
        return self.turn_stops(item, condition, answer_kind(condition))

    @abstractmethod
    def score(self, item: Item, condition: Condition, text: str, truncated: bool) -> ItemScore:
        """Score one generated text. Must not raise on any text."""

    def verdict(self, item: Item, condition: Condition, text: str, truncated: bool) -> Verdict:
        """What an arm's policy learns of an answer: ``score``'s validity and
        the same validator's errors (instance path, keyword, message; a text
        that does not parse is one 'parse' error with the parser's words),
        never whether it is right."""
        score = self.score(item, condition, text, truncated)
        errors = tuple(ErrorNote(v.instance_path, v.keyword, v.message or f"fails {v.keyword}")
                       for v in score.violations)
        if score.valid is False and not errors:
            keyword = "parse" if not score.parsed else "incomplete" if truncated else "invalid"
            errors = (ErrorNote("", keyword, score.note or "the answer is not a valid document"),)
        return Verdict(valid=score.valid, errors=errors)

    def attention_text(self, item: Item, condition: Condition) -> str:
        """The schema as the prompt shows it (a task with ``shows_schema``
        overrides this)."""
        raise NotImplementedError(f"task {self.name} does not say where its schema is in the prompt")

    def execute(self, item: Item, answer: JSONValue) -> bool | None:
        """Optional execution check of an answer read from the output
        (executable accuracy, carried by ``ItemScore.executable``). None: the
        task has no execution check. ``answer`` is None when nothing could be
        read from the output."""
        return None

    def describe(self) -> dict[str, Any]:
        """Task facts for the report header."""
        return {"name": self.name, "correctness_label": self.correctness_label}


tasks: Registry[type[Task]] = Registry("task", {
    "generation": "conformbench.tasks.concodeeval.generation",
    "validation": "conformbench.tasks.concodeeval.validation",
    "gsm8k": "conformbench.tasks.gsm8k",
    "bfcl-simple": "conformbench.tasks.bfcl.task",
} | {
    f"bfcl-{category}": "conformbench.tasks.bfcl.v4"
    for category in ("simple-python", "multiple", "parallel", "parallel-multiple", "irrelevance",
                     "live-simple", "live-parallel", "live-parallel-multiple")
} | {
    "custom": "conformbench.tasks.custom",
})


def zero_by_definition(task: str) -> frozenset[str]:
    """The rates the named task makes 0 by definition (none for a task not registered here)."""
    return tasks.get(task).zero_by_definition if task in tasks.names() else frozenset()
