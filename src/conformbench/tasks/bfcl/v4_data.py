"""The shipped BFCL v4 single-turn data (``data/bfcl-v4/``, gorilla commit
6ea57973, Apache-2.0) read as ``CallItem`` records, one category at a time.

Each category is a JSON Lines file of questions and, beside it under
``possible_answer/``, one of ground truths paired by id (irrelevance has
none: no call is the right answer). Every function's parameters are
converted to JSON Schema at load time, so a changed file fails here, not
mid-run.
"""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files
from typing import Any

from conformbench.errors import UsageError
from conformbench.files import jsonl_error, jsonl_lines
from conformbench.jsontypes import JSONValue
from conformbench.registry import did_you_mean
from conformbench.tasks.bfcl.calls import CATEGORIES, CallItem, CallMessage, OfferedFunction, PossibleCall
from conformbench.tasks.bfcl.functions import BfclFunction

__all__ = ["item_from_json", "item_json", "load_category", "shipped_rows"]

_FOLDER = "data/bfcl-v4"


def shipped_rows(relative: str) -> list[dict[str, Any]]:
    """The rows of a BFCL JSONL file shipped in the package (v3 simple's and
    v4's alike), each an object with a string id."""
    text = files("conformbench").joinpath(relative).read_text(encoding="utf-8")
    rows: list[dict[str, Any]] = []
    for number, line in enumerate(jsonl_lines(text), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise UsageError(f"{relative} line {number} is not JSON: {jsonl_error(exc)}") from None
        if not isinstance(row, dict) or not isinstance(row.get("id"), str):
            raise UsageError(f"{relative} line {number} has no id")
        rows.append(row)
    return rows


def _messages(row: dict[str, Any], where: str) -> tuple[CallMessage, ...]:
    turns = row.get("question")
    if not isinstance(turns, list) or len(turns) != 1 or not isinstance(turns[0], list) or not turns[0]:
        raise UsageError(f"{where}: not a single-turn item")
    out: list[CallMessage] = []
    for message in turns[0]:
        role = message.get("role") if isinstance(message, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        if role not in ("system", "user") or not isinstance(content, str):
            raise UsageError(f"{where}: a question message must be a system or user message with text")
        out.append(CallMessage(role, content))
    if out[-1].role != "user":
        raise UsageError(f"{where}: the question does not end with the user's message")
    return tuple(out)


def _possible(answer: dict[str, Any], where: str) -> tuple[PossibleCall, ...]:
    truth = answer.get("ground_truth")
    if not isinstance(truth, list) or not truth:
        raise UsageError(f"{where}: the ground truth is not a list of calls")
    calls: list[PossibleCall] = []
    for entry in truth:
        if not isinstance(entry, dict) or len(entry) != 1:
            raise UsageError(f"{where}: each ground-truth call is one {{name: parameters}} object")
        ((name, accepted),) = entry.items()
        if not isinstance(accepted, dict) or not all(isinstance(v, list) for v in accepted.values()):
            raise UsageError(f"{where}: call {name!r} does not list accepted values per parameter")
        calls.append(PossibleCall(name, accepted))
    return tuple(calls)


def _item(category: str, row: dict[str, Any], answer: dict[str, Any] | None) -> CallItem:
    where = f"BFCL v4 item {row['id']}"
    raw = row.get("function")
    if not isinstance(raw, list) or not raw:
        raise UsageError(f"{where}: no functions offered")
    functions = tuple(OfferedFunction.of(BfclFunction.from_json(f, where)) for f in raw)
    possible = _possible(answer, where) if answer is not None else ()
    names = {f.name for f in functions}
    for call in possible:
        if call.name not in names:
            raise UsageError(f"{where}: the ground truth calls {call.name!r}, which the item does not offer")
    return CallItem(row["id"], category, _messages(row, where), functions, possible)


@cache
def load_category(category: str) -> tuple[CallItem, ...]:
    """Every item of BFCL v4 ``category`` (one of ``CATEGORIES``), in file order."""
    if category not in CATEGORIES:
        raise UsageError(f"no BFCL v4 category {category!r}{did_you_mean(category, list(CATEGORIES))}")
    name = f"BFCL_v4_{category}.json"
    questions = shipped_rows(f"{_FOLDER}/{name}")
    if category == "irrelevance":
        return tuple(_item(category, q, None) for q in questions)
    answers = shipped_rows(f"{_FOLDER}/possible_answer/{name}")
    by_id = {a["id"]: a for a in answers}
    if len(by_id) != len(answers) or set(by_id) != {q["id"] for q in questions}:
        raise UsageError(f"BFCL v4 {category}: questions and possible answers do not pair up by id")
    return tuple(_item(category, q, by_id[q["id"]]) for q in questions)


def item_json(item: CallItem) -> dict[str, JSONValue]:
    """The item as a task's ``Item.input`` stores it (read back by ``item_from_json``)."""
    return {
        "category": item.category,
        "messages": [{"role": m.role, "content": m.content} for m in item.messages],
        "functions": [f.document.to_json() for f in item.functions],
        "possible": [p.to_json() for p in item.possible],
    }


def item_from_json(item_id: str, value: dict[str, JSONValue]) -> CallItem:
    """The ``CallItem`` a task's ``Item.input`` holds (``item_json``); a
    replay's item that is not of that shape is a UsageError."""
    where = f"BFCL v4 item {item_id}"
    category = value.get("category")
    if not isinstance(category, str) or category not in CATEGORIES:
        raise UsageError(f"{where}: unknown category {category!r}")
    row: dict[str, Any] = {"id": item_id, "question": [value.get("messages")], "function": value.get("functions")}
    possible = value.get("possible")
    if not isinstance(possible, list):
        raise UsageError(f"{where}: no possible answer list")
    answer = {"ground_truth": possible} if possible else None
    return _item(category, row, answer)
