"""BFCL v3 "simple" (400 single-function calls) through the decoding arms.

The model writes one call's arguments. Contract ``arguments`` = the
function's parameters converted to JSON Schema (``bfcl.functions``). The
unconstrained arm writes the call in Python syntax, read with ``ast`` as
literals only. Correctness is the AST match of ``bfcl.checker`` against the
item's possible answer; nothing is executed.

Prompt styles: ``conformbench`` (default, ``contract_prompts``) and
``validbutwrong`` (validbutwrong 0.1.1's texts; its ``arguments`` schema is
that package's conversion of the parameters, shown and enforced alike).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, ClassVar, cast

from conformbench.errors import UsageError
from conformbench.jsontypes import JSONValue, Schema
from conformbench.records.items import Condition, Item, ItemScore, TaskOptions
from conformbench.records.prompt import Prompt
from conformbench.records.rounds import TurnKind
from conformbench.records.tool_calls import ToolFunction
from conformbench.tasks import contract_prompts, validbutwrong_prompts
from conformbench.tasks.base import tasks
from conformbench.tasks.bfcl.checker import check_call
from conformbench.tasks.bfcl.fc_tools import read_calls, tool_function, tool_validity
from conformbench.tasks.bfcl.functions import BfclFunction, FunctionCall, parameters_schema
from conformbench.tasks.bfcl.v4_data import shipped_rows
from conformbench.tasks.contract_task import ContractTask, Reading
from conformbench.tasks.extract import find_python_call

__all__ = ["BfclSimpleTask", "item_function", "load_bfcl_simple"]

_QUESTIONS = "data/bfcl/BFCL_v3_simple.json"
_ANSWERS = "data/bfcl/BFCL_v3_simple_possible_answer.json"


def _item(row: dict[str, Any], answer: dict[str, Any]) -> Item:
    where = f"BFCL item {row['id']}"
    try:
        (turn,) = row["question"]
        (message,) = turn
        question = message["content"]
        (raw_function,) = row["function"]
        ((_, possible),) = answer["ground_truth"][0].items()
    except (KeyError, TypeError, ValueError):
        raise UsageError(f"{where}: not a single-turn, single-function item") from None
    function = BfclFunction.from_json(raw_function, where)
    parameters_schema(function)  # fail at load time, not mid-run
    if not isinstance(question, str) or not isinstance(possible, dict):
        raise UsageError(f"{where}: malformed question or possible answer")
    return Item(
        id=row["id"],
        input={"question": question, "function": function.to_json()},
        target=possible,
    )


def load_bfcl_simple() -> list[Item]:
    """All 400 items of the shipped copy, in file order."""
    questions, answers = shipped_rows(_QUESTIONS), shipped_rows(_ANSWERS)
    by_id = {a["id"]: a for a in answers}
    if len(by_id) != len(answers) or set(by_id) != {q["id"] for q in questions}:
        raise UsageError("BFCL questions and possible answers do not pair up by id")
    return [_item(q, by_id[q["id"]]) for q in questions]


def item_function(item: Item) -> BfclFunction:
    return BfclFunction.from_json(item.input["function"], f"BFCL item {item.id}")


def _possible_answer(target: JSONValue) -> dict[str, list[JSONValue]] | None:
    """The accepted values per parameter, or None when ``target`` is not of that shape."""
    if not isinstance(target, dict):
        return None
    lists = {name: options for name, options in target.items() if isinstance(options, list)}
    return lists if len(lists) == len(target) else None


@tasks.register("bfcl-simple")
class BfclSimpleTask(ContractTask):
    correctness_label = "AST match accuracy"
    contracts: ClassVar[tuple[str, ...]] = ("arguments",)
    answer_contract = "arguments"
    prompt_styles = ("conformbench", "validbutwrong")
    offers_tools = True

    def __init__(self, options: TaskOptions) -> None:
        super().__init__(options)
        # parsed once per item: prompts, packaging, reading and judging each need them,
        # and a run asks for them several times per item and arm
        self._functions: dict[str, BfclFunction] = {}
        self._schemas: dict[str, Schema] = {}

    def load_items(self) -> list[Item]:
        return load_bfcl_simple()

    def _function(self, item: Item) -> BfclFunction:
        function = self._functions.get(item.id)
        if function is None:
            function = self._functions[item.id] = item_function(item)
        return function

    @property
    def _vbw(self) -> bool:
        return self.prompt_style == "validbutwrong"

    def schema(self, item: Item, contract: str) -> Schema:
        schema = self._schemas.get(item.id)
        if schema is None:
            function = self._function(item)
            schema = validbutwrong_prompts.bfcl_schema(function.parameters) if self._vbw \
                else parameters_schema(function)
            self._schemas[item.id] = schema
        return schema

    def _show(self, item: Item, template: str) -> str:
        function = self._function(item)
        show = validbutwrong_prompts.show_json if self._vbw else contract_prompts.show_schema
        return template.format(
            name=function.name,
            description=function.description,
            function=validbutwrong_prompts.show_json(function.to_json()),
            schema=show(self.schema(item, "arguments")),
            question=self.question(item),
        )

    def tool_functions(self, item: Item) -> tuple[ToolFunction, ...]:
        return (tool_function(self._function(item)),)

    def turn_prompt(self, item: Item, condition: Condition, kind: TurnKind) -> Prompt:
        if kind == "tools":  # BFCL's FC mode: the question alone, the function in the request's tools
            return contract_prompts.user_prompt(self.question(item))
        return super().turn_prompt(item, condition, kind)

    def score(self, item: Item, condition: Condition, text: str, truncated: bool) -> ItemScore:
        if condition.mode is None:
            return super().score(item, condition, text, truncated)
        return replace(self._score_tools(item, text), truncated=truncated)

    def _score_tools(self, item: Item, text: str) -> ItemScore:
        """A tools answer: valid when every call names the function with
        arguments valid against its ``arguments`` contract; correct when it
        is one call that the AST checker accepts."""
        calls = read_calls(text)
        if calls is None:
            return ItemScore(valid=False, correct=False, parsed=False, note="not a tools answer's calls")
        if not calls:
            return ItemScore(valid=False, correct=False, parsed=True, answer=[], note="no call")
        function = self._function(item)
        valid, violations, note = tool_validity(calls, {function.name: self.schema(item, "arguments")})
        correct, why = (False, "more than one call") if len(calls) > 1 else self.judge(item, calls[0])
        return ItemScore(valid=valid, correct=correct, parsed=True, violations=violations,
                         answer=cast("JSONValue", calls), note="; ".join(n for n in (note, why) if n) or None)

    def free_prompt(self, item: Item) -> str:
        return self._show(item, validbutwrong_prompts.BFCL_FREE if self._vbw else contract_prompts.BFCL_FREE)

    def json_prompt(self, item: Item, schema: Schema) -> str:
        return self._show(item, validbutwrong_prompts.BFCL_JSON if self._vbw else contract_prompts.BFCL_JSON)

    def packaging_request(self, item: Item, schema: Schema) -> str:
        if self._vbw:
            return validbutwrong_prompts.BFCL_PACKAGING.format(
                schema=validbutwrong_prompts.show_json(schema))
        return contract_prompts.BFCL_PACKAGING.format(schema=contract_prompts.show_schema(schema))

    def extract_free(self, item: Item, text: str) -> JSONValue:
        return self.read_free(item, text).answer

    def read_free(self, item: Item, text: str) -> Reading:
        reading = find_python_call(text, prefer=self._function(item).name)
        if reading.call is None:
            return Reading(None, reading.error)
        return Reading(reading.call.to_json())

    def extract_json(self, item: Item, contract: str, value: JSONValue) -> JSONValue:
        if not isinstance(value, dict):
            return None
        # The JSON arms write the arguments only: the function name is implied.
        return FunctionCall(self._function(item).name, value).to_json()

    def read_json(self, item: Item, contract: str, value: JSONValue) -> Reading:
        answer = self.extract_json(item, contract, value)
        return Reading(answer, None if answer is not None else "the JSON is not an object")

    def is_correct(self, item: Item, answer: JSONValue) -> bool:
        return self.judge(item, answer)[0]

    def judge(self, item: Item, answer: JSONValue) -> tuple[bool, str | None]:
        arguments = answer.get("arguments") if isinstance(answer, dict) else None
        if not (isinstance(answer, dict) and isinstance(arguments, dict)):
            return False, "no call"
        call = FunctionCall(str(answer.get("name")), arguments)
        possible = _possible_answer(item.target)
        if possible is None:
            return False, "item has no possible answer"
        verdict = check_call(self._function(item), call, possible, check_name=True)
        return verdict.correct, verdict.error
