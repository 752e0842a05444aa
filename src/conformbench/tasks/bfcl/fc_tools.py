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
"""

from __future__ import annotations

import copy
import json
from typing import Any

from conformbench.jsontypes import JSONValue, Schema
from conformbench.records.items import KeywordViolation
from conformbench.records.tool_calls import ToolFunction
from conformbench.tasks.bfcl.functions import BfclFunction
from conformbench.validator.schema_validator import validator_for

__all__ = ["PYTHON_HINT", "TO_OPENAPI", "read_calls", "tool_function", "tool_validity"]

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
