"""GSM8K (grade school math, test split, 1,319 problems) through the decoding
arms. Gold = the integer after ``#### `` (commas removed). Contracts:
``answer`` {"answer": int} and ``reasoning`` {"reasoning": str, "answer": int}
(reasoning first: property order is part of the contract).

Prompt styles: ``conformbench`` (default, ``contract_prompts``) and
``validbutwrong`` (validbutwrong 0.1.1's texts, ``validbutwrong_prompts``)."""

from __future__ import annotations

import json
from decimal import Decimal, InvalidOperation
from importlib.resources import files
from typing import ClassVar

from conformbench.errors import UsageError
from conformbench.files import jsonl_lines
from conformbench.jsontypes import JSONValue, Schema
from conformbench.records.items import Item
from conformbench.tasks import contract_prompts, validbutwrong_prompts
from conformbench.tasks.base import tasks
from conformbench.tasks.contract_task import ContractTask, Reading
from conformbench.tasks.extract import extract_number

__all__ = ["ANSWER_SCHEMA", "REASONING_SCHEMA", "Gsm8kTask", "load_gsm8k", "parse_gold"]

ANSWER_SCHEMA: Schema = {
    "type": "object",
    "properties": {"answer": {"type": "integer"}},
    "required": ["answer"],
    "additionalProperties": False,
}
REASONING_SCHEMA: Schema = {
    "type": "object",
    "properties": {"reasoning": {"type": "string"}, "answer": {"type": "integer"}},
    "required": ["reasoning", "answer"],
    "additionalProperties": False,
}

_MARK = "#### "


def parse_gold(solution: str) -> int:
    """The integer after the last ``#### `` of a GSM8K solution."""
    if _MARK not in solution:
        raise ValueError("no '#### ' answer line")
    raw = solution.rsplit(_MARK, 1)[1].strip().replace(",", "")
    return int(raw)


def load_gsm8k() -> list[Item]:
    """Every test problem of the shipped copy, in file order."""
    path = files("conformbench").joinpath("data/gsm8k/test.jsonl")
    items: list[Item] = []
    for index, line in enumerate(jsonl_lines(path.read_text(encoding="utf-8"))):
        try:
            row = json.loads(line)
            gold = parse_gold(row["answer"])
            question = row["question"]
        except (ValueError, KeyError, TypeError) as exc:
            raise UsageError(f"gsm8k data line {index + 1} is malformed: {exc}") from None
        items.append(Item(id=f"gsm8k_test_{index}", input={"question": question}, target=gold))
    return items


def _number(value: JSONValue) -> Decimal | None:
    """A JSON number as a Decimal (booleans are not numbers here)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return Decimal(str(value))
    except InvalidOperation:  # pragma: no cover - JSON numbers are finite
        return None


@tasks.register("gsm8k")
class Gsm8kTask(ContractTask):
    correctness_label = "answer accuracy"
    schemas: ClassVar[dict[str, Schema]] = {"answer": ANSWER_SCHEMA, "reasoning": REASONING_SCHEMA}
    answer_contract = "answer"
    prompt_styles = ("conformbench", "validbutwrong")

    def load_items(self) -> list[Item]:
        return load_gsm8k()

    def free_prompt(self, item: Item) -> str:
        if self.prompt_style == "validbutwrong":
            return validbutwrong_prompts.GSM8K_FREE.format(question=self.question(item))
        return contract_prompts.GSM8K_FREE.format(question=self.question(item))

    def json_prompt(self, item: Item, schema: Schema) -> str:
        if self.prompt_style == "validbutwrong":
            return validbutwrong_prompts.GSM8K_JSON.format(
                question=self.question(item), schema=validbutwrong_prompts.show_json(schema))
        return super().json_prompt(item, schema)

    def packaging_request(self, item: Item, schema: Schema) -> str:
        if self.prompt_style == "validbutwrong":
            return validbutwrong_prompts.PACKAGING.format(
                schema=validbutwrong_prompts.show_json(schema))
        return super().packaging_request(item, schema)

    def extract_free(self, item: Item, text: str) -> JSONValue:
        found = extract_number(text)
        return None if found is None else found.as_json()

    def read_free(self, item: Item, text: str) -> Reading:
        found = extract_number(text)
        if found is None:
            return Reading(None, "no number in the text")
        return Reading(found.as_json(), f"read from {found.source.replace('_', ' ')}")

    def extract_json(self, item: Item, contract: str, value: JSONValue) -> JSONValue:
        answer = value.get("answer") if isinstance(value, dict) else None
        return answer if _number(answer) is not None else None

    def read_json(self, item: Item, contract: str, value: JSONValue) -> Reading:
        answer = self.extract_json(item, contract, value)
        return Reading(answer, None if answer is not None else 'no numeric "answer" member')

    def is_correct(self, item: Item, answer: JSONValue) -> bool:
        got, gold = _number(answer), _number(item.target)
        return got is not None and gold is not None and got == gold
