"""BFCL v4 single-turn tasks, one per category: ``bfcl-simple-python``,
``bfcl-multiple``, ``bfcl-parallel``, ``bfcl-parallel-multiple``,
``bfcl-irrelevance``, ``bfcl-live-simple``, ``bfcl-live-parallel`` and
``bfcl-live-parallel-multiple`` (``bfcl-simple`` stays BFCL v3's).

One contract, ``calls``: the whole call envelope in BFCL's JSON return
format, a list of ``{"function": NAME, "parameters": {...}}`` where each
name is an offered function and its parameters follow that function's
schema, or the empty list: no call (``calls_schema``). ``prompt_only[calls]``
is BFCL prompt mode (``calls.prompt_mode``); ``constrained[calls]`` is the same
prompt under the grammar of that envelope. The answer is read as BFCL reads
prompt mode (``calls.answer_reading``) and judged by the official checker's rules
(``calls.verdicts``); validity is the envelope's JSON Schema.
"""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar, Literal

from pydantic import Field

from conformbench.jsontypes import JSONValue, Schema
from conformbench.records.items import Condition, Item, ItemScore, TaskOptions
from conformbench.records.prompt import Prompt
from conformbench.records.rounds import TurnKind
from conformbench.records.tool_calls import ToolFunction
from conformbench.tasks.base import tasks
from conformbench.tasks.bfcl.calls import CATEGORIES, CallAnswer, CallItem
from conformbench.tasks.bfcl.calls.answer_reading import read_calls
from conformbench.tasks.bfcl.calls.prompt_mode import FUNCTION_FORMATS, call_prompt, system_prompt
from conformbench.tasks.bfcl.calls.verdicts import score_calls
from conformbench.tasks.bfcl.fc_tools import score_tool_answer, tool_function, tool_prompt
from conformbench.tasks.bfcl.v4_data import item_from_json, item_json, load_category
from conformbench.tasks.contract_task import ContractTask
from conformbench.tasks.grid import Axis, TaskParams

__all__ = ["BfclCallsTask", "calls_schema", "task_name"]


class BfclCallsOptions(TaskParams):
    function_format: list[Literal["json", "yaml", "xml", "python", "nl"]] = Field(
        ["json"], description="The format(s) the offered functions are shown in (a grid axis of the prompt-mode "
        "arms; a tools arm sends them through the API's tools and runs once).")


def task_name(category: str) -> str:
    """``live_parallel`` -> ``bfcl-live-parallel`` (``simple_python``: ``bfcl-simple-python``)."""
    return "bfcl-" + category.replace("_", "-")


def calls_schema(item: CallItem) -> Schema:
    """The call envelope: no call (``[]``), or a list of calls, each an
    offered function's name with its arguments under its schema."""
    one_call: list[JSONValue] = [
        {"type": "object",
         "properties": {"function": {"const": f.name}, "parameters": f.schema},
         "required": ["function", "parameters"], "additionalProperties": False}
        for f in item.functions]
    return {"anyOf": [
        {"type": "array", "maxItems": 0},
        {"type": "array", "minItems": 1, "items": {"anyOf": one_call}},
    ]}


class BfclCallsTask(ContractTask):
    """A BFCL v4 category through prompt mode and the envelope's grammar."""

    category: ClassVar[str]
    correctness_label = "AST match accuracy"
    contracts: ClassVar[tuple[str, ...]] = ("calls",)
    answer_contract = "calls"
    options_model = BfclCallsOptions
    #: the tools arms send the functions through the API's tools, not shown in a format: they run once
    axes = (Axis("function_format", "function_format", "the format the offered functions are shown in",
                 in_tools_arms=False),)
    #: the tools arms (``tools[auto]``...) offer the item's functions through a server's tools API
    offers_tools = True

    def __init__(self, options: TaskOptions) -> None:
        super().__init__(options)
        self._calls: dict[str, CallItem] = {}

    def load_items(self) -> list[Item]:
        return [Item(id=c.id, input=item_json(c), target=[p.to_json() for p in c.possible],
                     meta={"category": c.category}) for c in load_category(self.category)]

    def default_arm_specs(self) -> tuple[str, ...]:
        return ("prompt_only[calls]", "constrained[calls]")

    def call_item(self, item: Item) -> CallItem:
        """The item's functions and ground truth (what every call arm is offered)."""
        found = self._calls.get(item.id)
        if found is None:
            found = self._calls[item.id] = item_from_json(item.id, item.input)
        return found

    def function_format(self, condition: Condition) -> str:
        value = condition.axis("function_format")
        return value if isinstance(value, str) and value in FUNCTION_FORMATS else "json"

    def schema(self, item: Item, contract: str) -> Schema:
        return calls_schema(self.call_item(item))

    def tool_functions(self, item: Item) -> tuple[ToolFunction, ...]:
        return tuple(tool_function(f.document) for f in self.call_item(item).functions)

    def turn_prompt(self, item: Item, condition: Condition, kind: TurnKind) -> Prompt:
        if kind == "tools":  # BFCL FC mode: the question alone, the functions in the request's tools
            return tool_prompt(self.call_item(item))
        return call_prompt(self.call_item(item), self.function_format(condition))

    def free_prompt(self, item: Item) -> str:
        return system_prompt(self.call_item(item), "json") + "\n\n" + self.call_item(item).question()

    def extract_free(self, item: Item, text: str) -> JSONValue:
        return read_calls(text).to_json()

    def is_correct(self, item: Item, answer: JSONValue) -> bool:
        return score_calls(self.call_item(item), CallAnswer.from_json(answer)).correct

    def score(self, item: Item, condition: Condition, text: str, truncated: bool) -> ItemScore:
        """Validity from the envelope's schema (the base class); the verdict
        from the calls BFCL's reader finds (an unreadable answer is no call).
        A tools arm's answer is its calls (``fc_tools.score_tool_answer``)."""
        if condition.mode is not None:
            scored = score_tool_answer(self.call_item(item), calls_schema(self.call_item(item)), text)
            return replace(scored, truncated=truncated)
        base = super().score(item, condition, text, truncated)
        try:
            answer = read_calls(text)
            verdict = score_calls(self.call_item(item), answer)
        except Exception as exc:  # noqa: BLE001 - score must never raise; say why
            return replace(base, correct=False, note=f"scoring error: {type(exc).__name__}: {str(exc)[:200]}")
        note = "unreadable: no call" if not answer.readable else verdict.error
        return replace(base, correct=verdict.correct, answer=answer.to_json() if answer.readable else None,
                       note=note)

    def describe(self) -> dict[str, object]:
        return {**super().describe(), "bfcl_category": self.category}


#: what each category asks of the model (BFCL's own descriptions, shortened), for ``list tasks``
WHAT: dict[str, str] = {
    "simple_python": "one Python function offered, one call to make",
    "multiple": "several functions offered, one call to the right one",
    "parallel": "one function offered, several calls to make at once",
    "parallel_multiple": "several functions offered, several calls to make at once",
    "irrelevance": "no offered function fits the question: the right answer is no call",
    "live_simple": "user-contributed questions, one function, one call",
    "live_parallel": "user-contributed questions, several calls at once",
    "live_parallel_multiple": "user-contributed questions, several functions, several calls at once",
}


def _register(category: str) -> None:
    name = task_name(category)
    doc = f"BFCL v4 {category}: {WHAT[category]}, scored by AST match as BFCL scores it."
    cls = type(f"Bfcl_{category}", (BfclCallsTask,), {"category": category, "name": name,
                                                      "__module__": __name__, "__doc__": doc})
    tasks.register(name)(cls)


for _category in CATEGORIES:
    _register(_category)
