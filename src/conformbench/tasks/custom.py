"""Custom QA from a JSONL file (task ``custom``).

Each line is ``{"question": str, "answer": str}`` (an optional ``"id"``).
How an answer is checked is the task's matcher (options ``match``,
``normalize``, ``tolerance``; see ``conformbench.tasks.matchers``): by
default it must equal the gold answer after case folding and whitespace
normalisation. Contract ``answer`` = {"answer": string}, or the user's own
schema (option ``schema``, the schema itself, which ``--schema FILE`` reads;
option ``answer_field`` names the property that holds the answer, else it is
inferred: ``custom_schema``). The matcher is a scoring choice: ``conformbench
score --match`` rescores with another. A bad file fails with one line naming
the line number.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

from conformbench.errors import UsageError
from conformbench.files import jsonl_error, jsonl_lines, read_text_file
from conformbench.jsontypes import JSONValue, Schema
from conformbench.records.items import Item, TaskOptions
from conformbench.tasks import contract_prompts
from conformbench.tasks.base import tasks
from conformbench.tasks.contract_task import ContractTask
from conformbench.tasks.custom_schema import answer_field_of
from conformbench.tasks.extract import answer_line
from conformbench.tasks.matchers import DEFAULT_MATCH, DEFAULT_NORMALIZE, AnswerMatcher

__all__ = ["ANSWER_SCHEMA", "MAX_FILE_BYTES", "CustomQaTask", "load_questions"]

ANSWER_SCHEMA: Schema = {
    "type": "object",
    "properties": {"answer": {"type": "string"}},
    "required": ["answer"],
    "additionalProperties": False,
}
MAX_FILE_BYTES = 64 * 1024 * 1024
_KEYS = ("question", "answer", "id")


def _row(path: Path, number: int, line: str) -> dict[str, Any]:
    where = f"{path} line {number}"
    try:
        row = json.loads(line)
    except (ValueError, RecursionError) as exc:
        raise UsageError(f"{where} is not JSON: {jsonl_error(exc)}") from None
    if not isinstance(row, dict):
        raise UsageError(f'{where}: expected an object {{"question": ..., "answer": ...}}')
    unknown = [k for k in row if k not in _KEYS]
    if unknown:
        raise UsageError(f"{where}: unknown key {unknown[0]!r} (keys: question, answer, id)")
    for key in ("question", "answer"):
        if not isinstance(row.get(key), str) or not row[key].strip():
            raise UsageError(f"{where}: {key!r} must be a non-empty string")
    if "id" in row and (not isinstance(row["id"], str) or not row["id"]):
        raise UsageError(f"{where}: 'id' must be a non-empty string")
    return row


def load_questions(path: Path, matcher: AnswerMatcher | None = None) -> list[Item]:
    """The items of a question/answer JSONL file (blank lines skipped);
    each gold answer must suit ``matcher`` (a number for ``number``, a
    pattern for ``regex``)."""
    items: list[Item] = []
    seen: set[str] = set()
    for number, line in enumerate(jsonl_lines(read_text_file(path, max_bytes=MAX_FILE_BYTES)), start=1):
        if not line.strip():
            continue
        row = _row(path, number, line)
        item_id = row.get("id", f"q{number}")
        if item_id in seen:
            raise UsageError(f"{path} line {number}: duplicate id {item_id!r}")
        seen.add(item_id)
        why = matcher.check_gold(row["answer"]) if matcher else None
        if why:
            raise UsageError(f"{path} line {number}: {why}")
        items.append(Item(id=item_id, input={"question": row["question"]}, target=row["answer"]))
    if not items:
        raise UsageError(f"{path} has no questions")
    return items


@tasks.register("custom")
class CustomQaTask(ContractTask):
    """QA over ``options.dataset`` (a JSONL path), checked by its matcher."""

    correctness_label = "exact match"
    schemas: ClassVar[dict[str, Schema]] = {"answer": ANSWER_SCHEMA}
    answer_contract = "answer"
    takes_dataset = True
    known_params = ("match", "normalize", "tolerance", "schema", "answer_field")

    def __init__(self, options: TaskOptions) -> None:
        super().__init__(options)
        self.matcher = _matcher(options)
        self.correctness_label = self.matcher.label
        self.contract: Schema = ANSWER_SCHEMA
        self.answer_field = "answer"
        own = options.params.get("schema")
        if own is not None:
            if not isinstance(own, dict):
                raise UsageError("task custom: schema must be a JSON Schema object (--schema FILE reads one)")
            named = options.params.get("answer_field")
            if named is not None and not isinstance(named, str):
                raise UsageError(f"task custom: answer_field must be a property name, not {named!r}")
            self.answer_field = answer_field_of(own, named)
            self.contract = own
        elif "answer_field" in options.params:
            raise UsageError("task custom: --answer-field needs --schema FILE (the default contract's field is answer)")

    def load_items(self) -> list[Item]:
        if not self.options.dataset:
            raise UsageError("task custom needs a dataset: --dataset FILE (a JSONL file of "
                             '{"question": ..., "answer": ...} lines), or dataset = "FILE" in its [[tasks]] table')
        return load_questions(Path(self.options.dataset), self.matcher)

    def describe(self) -> dict[str, Any]:
        m = self.matcher
        facts: dict[str, Any] = {**super().describe(), "match": m.match, "normalize": m.normalize}
        if m.match == "number":
            facts["tolerance"] = m.tolerance or 0
        if "schema" in self.options.params:
            facts["answer_field"] = self.answer_field
        return facts

    def schema(self, item: Item, contract: str) -> Schema:
        return self.contract

    def free_prompt(self, item: Item) -> str:
        return contract_prompts.CUSTOM_FREE.format(question=self.question(item))

    def extract_free(self, item: Item, text: str) -> JSONValue:
        found = answer_line(text)
        answer = found if found is not None else text.strip()
        return answer or None

    def extract_json(self, item: Item, contract: str, value: JSONValue) -> JSONValue:
        answer = value.get(self.answer_field) if isinstance(value, dict) else None
        if isinstance(answer, int | float) and not isinstance(answer, bool):
            return json.dumps(answer)  # a number is matched as its JSON text (--match number reads it)
        return answer if isinstance(answer, str) else None

    def is_correct(self, item: Item, answer: JSONValue) -> bool:
        return isinstance(answer, str) and isinstance(item.target, str) and self.matcher.matches(answer, item.target)


def _matcher(options: TaskOptions) -> AnswerMatcher:
    params = options.params
    match, normalize = params.get("match", DEFAULT_MATCH), params.get("normalize", DEFAULT_NORMALIZE)
    tolerance = params.get("tolerance")
    if not isinstance(match, str) or not isinstance(normalize, str):
        raise UsageError("task custom: match and normalize must be names (strings)")
    if tolerance is not None and (isinstance(tolerance, bool) or not isinstance(tolerance, int | float)):
        raise UsageError(f"task custom: tolerance must be a number, not {tolerance!r}")
    return AnswerMatcher(match, normalize, None if tolerance is None else float(tolerance))
