"""ContractTask: a Task run through the decoding arms (unconstrained,
prompt_only[S], constrained[S], reason_then_constrain[S]) over named JSON
contracts S. GSM8K, BFCL and custom JSONL tasks are built on it; a new task
only supplies its items, a free-text prompt, its schemas and how to read and
check an answer (see examples/custom_task.py).

Subclass hooks (the last four have defaults):
  load_items()                    every item, in a fixed order
  free_prompt(item) -> str        the unconstrained prompt
  extract_free(item, text)        the answer in free text (None: none found)
  is_correct(item, answer)        the answer checker
  schema(item, contract)          S (default: ``schemas[contract]``)
  json_prompt(item, schema)       the prompt_only[S] / constrained[S] prompt
  extract_json(item, contract, value)  the answer in the parsed JSON
  execute(item, answer)           optional execution check (Task.execute)
  posed(text, condition)          a first turn's request under the task's own axes

A task that offers more than one prompt style lists them in
``prompt_styles`` (the first is the default) and reads ``self.prompt_style``
in its prompt hooks; the style is the task option ``prompt_style``, a field
of ``PromptStyleOptions`` (the task's options model is made from it, its
choices the styles; a task with an options model of its own derives it
from ``PromptStyleOptions``).
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Literal, cast

from pydantic import create_model

from conformbench.errors import UsageError
from conformbench.formats.limits import oversize
from conformbench.jsontypes import JSONValue, Schema
from conformbench.records.items import Condition, Item, ItemScore, KeywordViolation, TaskOptions
from conformbench.records.prompt import Prompt
from conformbench.records.rounds import TurnKind
from conformbench.registry import did_you_mean
from conformbench.tasks import contract_prompts
from conformbench.tasks.base import Task
from conformbench.tasks.extract import parse_json_output
from conformbench.tasks.grid import TaskParams
from conformbench.validator.schema_validator import validator_for

__all__ = ["ContractTask", "PromptStyleOptions", "Reading"]


@dataclass(frozen=True)
class Reading:
    """An answer read from output (None: nothing readable) and a note saying
    where it came from or why there is none."""

    answer: JSONValue
    note: str | None = None


class PromptStyleOptions(TaskParams):
    """The options of a task that offers prompt styles (``prompt_styles``):
    the model ``ContractTask`` makes for such a task narrows ``prompt_style``
    to the styles, the first its default."""

    prompt_style: str = ""


class ContractTask(Task):
    """Base class of tasks whose conditions are the decoding arms."""

    #: contract name -> JSON Schema, for tasks whose schemas do not vary per item
    schemas: ClassVar[dict[str, Schema]] = {}
    #: whether TaskOptions.dataset is used
    takes_dataset: ClassVar[bool] = False
    #: prompt styles offered (option ``prompt_style``); the first is the default
    prompt_styles: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.schemas and not cls.__dict__.get("contracts"):
            cls.contracts = tuple(cls.schemas)
        if cls.answer_contract is None and len(cls.contracts) == 1:
            cls.answer_contract = cls.contracts[0]
        if cls.prompt_styles and cls.__dict__.get("options_model") is None:
            # the prompt style is an option of the task's model, its choices the styles
            style = cast(Any, Literal)[cls.prompt_styles]
            cls.options_model = create_model(f"{cls.__name__}Options", __base__=PromptStyleOptions,
                                             prompt_style=(style, cls.prompt_styles[0]))
        elif cls.prompt_styles and not issubclass(cls.options_model or TaskParams, PromptStyleOptions):
            raise TypeError(f"{cls.__name__} offers prompt styles, so its options model must derive from "
                            "PromptStyleOptions (conformbench.tasks.contract_task)")

    def __init__(self, options: TaskOptions) -> None:
        super().__init__(options)
        self._check_options()
        self._items: list[Item] | None = None

    # ------------------------------------------------------------ subclass API

    @abstractmethod
    def load_items(self) -> list[Item]:
        """Every item of the task, in a fixed order."""

    @abstractmethod
    def free_prompt(self, item: Item) -> str:
        """The prompt of the unconstrained arm (and first turn of reason_then_constrain)."""

    @abstractmethod
    def extract_free(self, item: Item, text: str) -> JSONValue:
        """The answer written in free text, or None."""

    @abstractmethod
    def is_correct(self, item: Item, answer: JSONValue) -> bool:
        """Whether a read answer is right."""

    @property
    def prompt_style(self) -> str:
        """The prompt style of this run ('' when the task offers none)."""
        params = self.task_params
        return params.prompt_style if isinstance(params, PromptStyleOptions) else ""

    def schema(self, item: Item, contract: str) -> Schema:
        return self.schemas[contract]

    def question(self, item: Item) -> str:
        value = item.input.get("question")
        return value if isinstance(value, str) else ""

    def json_prompt(self, item: Item, schema: Schema) -> str:
        return f"{self.question(item)}\n\n{contract_prompts.json_contract_request(schema)}"

    def packaging_request(self, item: Item, schema: Schema) -> str:
        return contract_prompts.packaging_request(schema)

    def extract_json(self, item: Item, contract: str, value: JSONValue) -> JSONValue:
        """The answer in a parsed JSON output (default: its "answer" member)."""
        return value.get("answer") if isinstance(value, dict) else None

    def read_free(self, item: Item, text: str) -> Reading:
        """extract_free with a note; override to explain failures."""
        answer = self.extract_free(item, text)
        return Reading(answer, None if answer is not None else "no answer found in the text")

    def read_json(self, item: Item, contract: str, value: JSONValue) -> Reading:
        answer = self.extract_json(item, contract, value)
        return Reading(answer, None if answer is not None else "no answer in the JSON")

    def judge(self, item: Item, answer: JSONValue) -> tuple[bool, str | None]:
        """(correct, why not); override to explain wrong answers."""
        return self.is_correct(item, answer), None

    # ------------------------------------------------------------ Task API

    def items(self) -> list[Item]:
        if self._items is None:
            every = self.load_items()
            n = self.options.n
            if n is not None and n > len(every):
                raise UsageError(f"task {self.name} has {len(every)} items; n={n} asks for more")
            self._items = every if n is None else every[:n]
        return list(self._items)

    def arm_specs(self) -> tuple[str, ...]:
        return self.options.arms or self.default_arm_specs()

    def default_arm_specs(self) -> tuple[str, ...]:
        specs = ["unconstrained"]
        for contract in self.contracts:
            # paired: the grammar is the only difference between the two
            specs += [f"prompt_only[{contract}]", f"constrained[{contract}]"]
        if self.answer_contract is not None:
            specs.append(f"reason_then_constrain[{self.answer_contract}]")
        return tuple(specs)

    def posed(self, text: str, condition: Condition) -> str:
        """A first turn's request under the condition's own axes (a task
        declaring ``axes`` overrides this; default: ``text`` as is)."""
        return text

    def turn_prompt(self, item: Item, condition: Condition, kind: TurnKind) -> Prompt:
        """The free prompt for a "free" turn, else the contract's JSON prompt
        (the same with the grammar on or off)."""
        if kind == "free":
            return contract_prompts.user_prompt(self.posed(self.free_prompt(item), condition))
        schema = self._contract(item, condition)
        return contract_prompts.user_prompt(self.posed(self.json_prompt(item, schema), condition))

    def contract_schema(self, item: Item, condition: Condition) -> Schema | None:
        return None if condition.contract is None else self._contract(item, condition)

    def packaging_prompt(self, item: Item, condition: Condition, free_text: str) -> Prompt:
        schema = self._contract(item, condition)
        first = contract_prompts.user_prompt(self.posed(self.free_prompt(item), condition))
        return contract_prompts.two_turn_prompt(first, free_text, self.packaging_request(item, schema))

    def thinking_prompt(self, item: Item, condition: Condition, stop: str) -> Prompt:
        schema = self._contract(item, condition)
        return contract_prompts.user_prompt(self.posed(
            f"{self.free_prompt(item)}\n\n{contract_prompts.thinking_request(schema, stop)}", condition))

    def score(self, item: Item, condition: Condition, text: str, truncated: bool) -> ItemScore:
        try:
            if condition.contract is None:
                scored = self._score_free(item, text)
            else:
                scored = self._score_json(item, condition, text)
            scored = self._with_execution(item, scored)
        except Exception as exc:  # noqa: BLE001 - score must never raise; say why
            scored = ItemScore(
                valid=None if condition.contract is None else False,
                correct=False,
                parsed=False,
                note=f"scoring error: {type(exc).__name__}: {str(exc)[:200]}",
            )
        return replace(scored, truncated=truncated)

    # ------------------------------------------------------------ internals

    def _score_free(self, item: Item, text: str) -> ItemScore:
        too_long = oversize(text)  # read by no reader, as a document's answer is not
        if too_long:
            return ItemScore(valid=None, correct=False, parsed=False, note=too_long)
        reading = self.read_free(item, text)
        if reading.answer is None:
            return ItemScore(valid=None, correct=False, parsed=False, note=reading.note)
        correct, why = self.judge(item, reading.answer)
        return ItemScore(valid=None, correct=correct, answer=reading.answer,
                         note=_join(reading.note, why))

    def _score_json(self, item: Item, condition: Condition, text: str) -> ItemScore:
        schema = self._contract(item, condition)
        parsed = parse_json_output(text, schema)
        if not parsed.ok:
            return ItemScore(valid=False, correct=False, parsed=False, note=parsed.error)
        validator = validator_for(schema, formats=self.options.format_mode)
        violations = tuple(
            KeywordViolation(v.keyword, v.schema_path, v.instance_path, message=v.message)
            for v in validator.violations(parsed.value)
        )
        reading = self.read_json(item, str(condition.contract), parsed.value)
        correct, why = (False, None) if reading.answer is None else self.judge(item, reading.answer)
        return ItemScore(
            valid=not violations,
            correct=correct,
            parsed=True,
            root_type_ok=isinstance(parsed.value, dict) if schema.get("type") == "object" else None,
            violations=violations,
            answer=reading.answer,
            note=_join(reading.note, why),
        )

    def _with_execution(self, item: Item, scored: ItemScore) -> ItemScore:
        try:
            executable = self.execute(item, scored.answer)
        except Exception as exc:  # noqa: BLE001 - user check code must not stop scoring
            note = _join(scored.note, f"execute raised {type(exc).__name__}: {str(exc)[:200]}")
            return replace(scored, executable=False, note=note)
        return replace(scored, executable=executable)

    def _contract(self, item: Item, condition: Condition) -> Schema:
        contract = condition.contract
        if contract not in self.contracts:
            hint = did_you_mean(str(contract), list(self.contracts))
            raise UsageError(f"task {self.name} has no contract {contract!r}{hint}")
        return self.schema(item, contract)

    def _check_options(self) -> None:
        """What ``Task`` does not check already (the params, the axes)."""
        opts = self.options
        if opts.n is not None and opts.n < 0:
            raise UsageError(f"n must be 0 or more, not {opts.n}")
        if opts.dataset is not None and not self.takes_dataset:
            raise UsageError(f"task {self.name} takes no dataset (it ships its own data)")


def _join(*notes: str | None) -> str | None:
    kept = [n for n in notes if n]
    return "; ".join(kept) if kept else None
