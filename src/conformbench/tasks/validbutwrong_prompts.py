"""Prompt style ``validbutwrong``: the prompt texts and schema display of
validbutwrong 0.1.1 (its ``tasks.py``), so that a side-by-side run sends the
model the same bytes, and so that its replays can be imported with the
prompts it really sent (``conformbench import validbutwrong``).

Written from that package's behaviour and checked against the installed
package in the tests (every prompt of both tasks, byte for byte); nothing of
its code is copied. The differences from conformbench's own style
(``contract_prompts``), which a reader comparing numbers should know:

- the schema is shown as one line of ``json.dumps`` (ASCII escapes, ``", "``
  and ``": "`` separators), not indented in a fenced block;
- BFCL shows the whole function document as one JSON line, and its
  ``arguments`` schema is validbutwrong's conversion (``bfcl_schema``:
  ``default`` dropped, ``any`` with ``integer`` in its union); the contract
  the grammar enforces and the output is validated against is that same
  schema, so the prompt still shows the contract verbatim;
- the packaging turn of reason_then_constrain says "ONLY a JSON object ...
  with no other text".
"""

from __future__ import annotations

import json
from typing import Any

from conformbench.jsontypes import Schema

__all__ = [
    "BFCL_FREE",
    "BFCL_JSON",
    "BFCL_PACKAGING",
    "GSM8K_FREE",
    "GSM8K_JSON",
    "PACKAGING",
    "bfcl_schema",
    "show_json",
]

GSM8K_FREE = (
    "{question}\n\nSolve the problem. Think step by step, then finish with a "
    "final line of the form 'Answer: <number>'."
)
GSM8K_JSON = (
    "{question}\n\nSolve the problem. Respond with ONLY a JSON object matching "
    "this JSON Schema, with no other text:\n{schema}"
)
#: the packaging turn of every task but BFCL
PACKAGING = (
    "Now give your final answer as ONLY a JSON object matching this JSON Schema, "
    "with no other text:\n{schema}"
)

BFCL_FREE = (
    "You can call this function:\n{function}\n\nRequest: {question}\n\n"
    "Write the single call to `{name}` that fulfils the request, in Python syntax, "
    "e.g. {name}(arg=value). Write only the call."
)
BFCL_JSON = (
    "You can call this function:\n{function}\n\nRequest: {question}\n\n"
    "Give the arguments for the call to `{name}` as ONLY a JSON object matching this "
    "JSON Schema, with no other text:\n{schema}"
)
BFCL_PACKAGING = (
    "Now give the arguments of that call as ONLY a JSON object matching this JSON "
    "Schema, with no other text:\n{schema}"
)

#: BFCL type names validbutwrong renames; ``any`` becomes an explicit union
_TYPES: dict[str, Any] = {
    "dict": "object",
    "float": "number",
    "tuple": "array",
    "any": ["string", "number", "integer", "boolean", "array", "object", "null"],
}


def show_json(value: Any) -> str:
    """A schema or function document as validbutwrong shows it: one line of
    Python's default ``json.dumps``."""
    return json.dumps(value)


def bfcl_schema(spec: dict[str, Any]) -> Schema:
    """validbutwrong's JSON Schema of a BFCL parameter document.

    Key order matters (the prompt shows it): ``type``, ``description``,
    ``enum``, then for objects ``properties``, ``additionalProperties``
    (always false) and a non-empty ``required``, then ``items``. Other BFCL
    keys (``default``, ``optional``) are dropped.
    """
    out: Schema = {}
    bfcl_type = spec.get("type")
    if bfcl_type is not None:
        renamed = _TYPES.get(bfcl_type, bfcl_type)
        out["type"] = list(renamed) if isinstance(renamed, list) else renamed
    out.update({key: spec[key] for key in ("description", "enum") if key in spec})
    if "properties" in spec:
        out["properties"] = {name: bfcl_schema(sub) for name, sub in spec["properties"].items()}
        out["type"] = "object"
        out["additionalProperties"] = False
        if spec.get("required"):
            out["required"] = list(spec["required"])
    if "items" in spec:
        out["items"] = bfcl_schema(spec["items"])
    return out
