"""Custom exact-match QA from a JSONL file (task ``custom``).

Each line is ``{"question": str, "answer": str}`` (an optional ``"id"``).
An answer is right when it equals the gold answer after case folding and
whitespace normalisation. Contract ``answer`` = {"answer": string}.
A bad file fails with one line naming the line number.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

from conformbench.errors import UsageError
from conformbench.files import read_text_file
from conformbench.jsontypes import JSONValue, Schema
from conformbench.records.items import Item
from conformbench.tasks import contract_prompts
from conformbench.tasks.base import tasks
from conformbench.tasks.contract_task import ContractTask
from conformbench.tasks.extract import answer_line, normalize_text

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
        raise UsageError(f"{where} is not JSON: {str(exc)[:120]}") from None
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


def load_questions(path: Path) -> list[Item]:
    """The items of a question/answer JSONL file (blank lines skipped)."""
    items: list[Item] = []
    seen: set[str] = set()
    for number, line in enumerate(read_text_file(path, max_bytes=MAX_FILE_BYTES).splitlines(), start=1):
        if not line.strip():
            continue
        row = _row(path, number, line)
        item_id = row.get("id", f"q{number}")
        if item_id in seen:
            raise UsageError(f"{path} line {number}: duplicate id {item_id!r}")
        seen.add(item_id)
        items.append(Item(id=item_id, input={"question": row["question"]}, target=row["answer"]))
    if not items:
        raise UsageError(f"{path} has no questions")
    return items


@tasks.register("custom")
class CustomQaTask(ContractTask):
    """Exact-match QA over ``options.dataset`` (a JSONL path)."""

    correctness_label = "exact match"
    schemas: ClassVar[dict[str, Schema]] = {"answer": ANSWER_SCHEMA}
    answer_contract = "answer"
    takes_dataset = True

    def load_items(self) -> list[Item]:
        if not self.options.dataset:
            raise UsageError("task custom needs a dataset: a JSONL file of question/answer lines")
        return load_questions(Path(self.options.dataset))

    def free_prompt(self, item: Item) -> str:
        return contract_prompts.CUSTOM_FREE.format(question=self.question(item))

    def extract_free(self, item: Item, text: str) -> JSONValue:
        found = answer_line(text)
        answer = found if found is not None else text.strip()
        return answer or None

    def extract_json(self, item: Item, contract: str, value: JSONValue) -> JSONValue:
        answer = value.get("answer") if isinstance(value, dict) else None
        return answer if isinstance(answer, str) else None

    def is_correct(self, item: Item, answer: JSONValue) -> bool:
        return (
            isinstance(answer, str)
            and isinstance(item.target, str)
            and normalize_text(answer) == normalize_text(item.target)
        )
