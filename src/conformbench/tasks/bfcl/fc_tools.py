"""BFCL functions as a server's ``tools`` (BFCL's FC mode), and tools
answers scored against an item's functions.

The conversion follows BFCL's own for OpenAI-style APIs (gorilla's
``bfcl_eval/model_handler/utils.py``: ``convert_to_tool`` with the
``GORILLA_TO_OPENAPI`` type table, after the Python-language hint its
``_func_doc_language_specific_pre_processing`` adds), written here from its
behaviour:

- the description gains " Note that the provided function is in Python 3 syntax.";
- a dotted name is sent with its dots as underscores (OpenAI's name rule
  ``^[a-zA-Z0-9_-]{1,64}$``); the answer maps it back;
- ``parameters`` becomes ``type: object``; each property's BFCL type is
  mapped (``dict`` → object, ``float`` → number with ``format: float`` and
  " This is a float type value." in its description, ``tuple`` → array,
  ``any`` and unknown types → string, a missing type → string), inside
  nested properties and array items as BFCL does; every other key
  (``required``, ``enum``, ``default``...) is sent as it is.

So the schema the server is handed is BFCL's, not our ``arguments``
contract (``bfcl.functions.parameters_schema``), which is what answers are
validated against: ``any`` there is any value, here a string.

A BFCL v4 item's tools answer (``score_tool_answer``) is judged as BFCL's
FC mode judges it: the calls the server returned (never the text beside
them), each call's arguments decoded as JSON; a call whose arguments are
not a JSON object makes the whole answer unreadable, which BFCL counts as
no call (right on irrelevance only). Validity is the same contract as the
prompt-mode arms': the call envelope (``v4.calls_schema``) holding the
calls, so ``[]`` (no call) is valid and a call whose arguments break its
function's schema is not.
"""

from __future__ import annotations

import copy
import json
from typing import Any, cast

from conformbench.jsontypes import JSONValue, Schema
from conformbench.records.items import ItemScore, KeywordViolation
from conformbench.records.prompt import Message, Prompt
from conformbench.records.tool_calls import ToolFunction
from conformbench.tasks.bfcl.calls import CallAnswer, CallItem
from conformbench.tasks.bfcl.calls.verdicts import score_calls
from conformbench.tasks.bfcl.functions import BfclFunction
from conformbench.validator.schema_validator import validator_for

__all__ = ["PYTHON_HINT", "TO_OPENAPI", "read_calls", "score_tool_answer", "tool_function", "tool_prompt",
           "tool_validity"]

PYTHON_HINT = " Note that the provided function is in Python 3 syntax."

#: BFCL's GORILLA_TO_OPENAPI
TO_OPENAPI: dict[str, str] = {
    "integer": "integer", "number": "number", "float": "number", "string": "string", "boolean": "boolean",
    "bool": "boolean", "array": "array", "list": "array", "dict": "object", "object": "object",
    "tuple": "array", "any": "string", "byte": "integer", "short": "integer", "long": "integer",
    "double": "number", "char": "string", "ArrayList": "array", "Array": "array", "HashMap": "object",
    "Hashtable": "object", "Queue": "array", "Stack": "array", "Any": "string", "String": "string",
    "Bigint": "integer",
}  # fmt: skip


def _mapped(bfcl_type: Any) -> str:
    return TO_OPENAPI.get(bfcl_type, "string") if isinstance(bfcl_type, str) else "string"


def _cast_items(items: dict[str, Any]) -> None:
    items["type"] = _mapped(items.get("type"))
    nested = items.get("items")
    if items["type"] == "array" and isinstance(nested, dict):
        nested["type"] = _mapped(nested.get("type"))
    elif items["type"] == "object" and isinstance(items.get("properties"), dict):
        _cast_properties(items["properties"])


def _cast_properties(properties: dict[str, Any]) -> None:
    for value in properties.values():
        if not isinstance(value, dict):
            continue
        if value.get("type") == "float":
            value["format"] = "float"
            value["description"] = str(value.get("description", "")) + " This is a float type value."
        value["type"] = _mapped(value.get("type", "string"))
        if value["type"] in ("array", "object"):
            if isinstance(value.get("properties"), dict):
                _cast_properties(value["properties"])
            elif isinstance(value.get("items"), dict):
                _cast_items(value["items"])


def tool_function(function: BfclFunction) -> ToolFunction:
    """``function`` as BFCL's FC mode sends it to an OpenAI-style API."""
    parameters: Schema = copy.deepcopy(function.parameters)
    parameters["type"] = "object"
    if isinstance(parameters.get("properties"), dict):
        _cast_properties(parameters["properties"])
    return ToolFunction(name=function.name.replace(".", "_"), description=function.description + PYTHON_HINT,
                        parameters=parameters, original=function.name)


def read_calls(text: str) -> list[dict[str, JSONValue]] | None:
    """The calls of a tools answer's scored text (``records.tool_calls.calls_text``),
    or None where the text is not such a list (a hand-edited replay)."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, list) or not all(isinstance(c, dict) and isinstance(c.get("name"), str)
                                              for c in value):
        return None
    return value


def tool_validity(calls: list[dict[str, JSONValue]],
                  schemas: dict[str, Schema]) -> tuple[bool, tuple[KeywordViolation, ...], str | None]:
    """Whether every call names an offered function and its arguments are an
    object valid against that function's schema (``schemas`` by the task's
    name); the violations, each path prefixed by the call's index."""
    found: list[KeywordViolation] = []
    notes: list[str] = []
    for index, call in enumerate(calls):
        schema = schemas.get(str(call["name"]))
        if schema is None:
            notes.append(f"call {index} names {str(call['name'])[:60]!r}, which is not offered")
            continue
        if "arguments" not in call:
            notes.append(f"call {index}'s arguments are not JSON")
            continue
        for v in validator_for(schema).violations(call["arguments"]):
            found.append(KeywordViolation(v.keyword, v.schema_path, f"/{index}/arguments{v.instance_path}",
                                          message=v.message))
    return not found and not notes, tuple(found), "; ".join(notes) or None


def tool_prompt(item: CallItem) -> Prompt:
    """BFCL FC mode's messages: the item's question turn as it is (a live
    item's own system message kept), no functions in it."""
    return Prompt(tuple(Message(m.role, m.content) for m in item.messages))


def _answer(calls: list[dict[str, JSONValue]]) -> tuple[CallAnswer, str | None]:
    if all(isinstance(c.get("arguments"), dict) for c in calls):
        return CallAnswer.of([(str(c["name"]), cast("dict[str, JSONValue]", c["arguments"])) for c in calls]), None
    odd = sum(not isinstance(c.get("arguments"), dict) for c in calls)
    return CallAnswer((), readable=False), (f"{odd} of {len(calls)} call(s) have arguments that are not a JSON "
                                            "object: BFCL reads the answer as no call")


def score_tool_answer(item: CallItem, envelope: Schema, text: str) -> ItemScore:
    """A tools answer's score on ``item`` (see the module's docstring);
    ``envelope``: the item's call envelope schema."""
    calls = read_calls(text)
    if calls is None:
        return ItemScore(valid=False, correct=False, parsed=False, note="not a tools answer's calls")
    shown: list[JSONValue] = [{"function": c["name"], "parameters": c.get("arguments", c.get("arguments_text"))}
                              for c in calls]
    violations = tuple(KeywordViolation(v.keyword, v.schema_path, v.instance_path, message=v.message)
                       for v in validator_for(envelope).violations(shown))
    answer, why = _answer(calls)
    verdict = score_calls(item, answer)
    note = "; ".join(n for n in (why, verdict.error) if n) or None
    return ItemScore(valid=not violations, correct=verdict.correct, parsed=True, violations=violations,
                     answer=answer.to_json() if answer.readable else None, note=note)
