"""BFCL function documents and their conversion to JSON Schema.

BFCL describes parameters in a JSON-Schema-like dialect with Python type
names: ``dict`` is an object, ``float`` a number, ``tuple`` an array and
``any`` any value. The contract a model is asked for (``arguments``) is the
converted schema. Property order is kept exactly: it is part of the contract.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from conformbench.errors import UsageError
from conformbench.jsontypes import JSONValue, Schema

__all__ = [
    "ANY_TYPES",
    "BfclFunction",
    "FunctionCall",
    "parameters_schema",
    "to_json_schema",
]

#: ``any`` becomes this explicit union (not ``{}``): every constraint engine
#: compiles a type list, and an empty schema is refused by some of them.
ANY_TYPES: tuple[str, ...] = ("string", "number", "boolean", "array", "object", "null")

_TYPES: dict[str, str] = {
    "string": "string",
    "integer": "integer",
    "float": "number",
    "boolean": "boolean",
    "array": "array",
    "tuple": "array",
    "dict": "object",
}
#: BFCL keys carried over unchanged (annotations, enum, and the few JSON
#: Schema keywords BFCL v4's live items use; v3 simple has none of those)
_KEPT = ("description", "enum", "default", "format", "maximum", "minItems", "maxItems")
#: BFCL's ``optional`` marker has no JSON Schema meaning; optionality is
#: already carried by ``required``, so it is left out of the converted schema.
_DROPPED = frozenset({"optional"})
_STRUCTURAL = frozenset({"type", "properties", "required", "items"})


@dataclass(frozen=True)
class BfclFunction:
    """One function document of a BFCL item."""

    name: str
    description: str
    #: the BFCL ``parameters`` document as shipped (type ``dict``)
    parameters: dict[str, Any]

    @classmethod
    def from_json(cls, value: JSONValue, where: str) -> BfclFunction:
        if not isinstance(value, dict):
            raise UsageError(f"{where}: a function must be a JSON object")
        name, params = value.get("name"), value.get("parameters")
        if not isinstance(name, str) or not name:
            raise UsageError(f"{where}: the function has no name")
        if not isinstance(params, dict) or params.get("type") != "dict":
            raise UsageError(f"{where}: function {name!r} has no 'dict' parameters")
        description = value.get("description", "")
        return cls(name, description if isinstance(description, str) else "", params)

    def to_json(self) -> dict[str, JSONValue]:
        return {"name": self.name, "description": self.description, "parameters": self.parameters}


@dataclass(frozen=True)
class FunctionCall:
    """A call read from model output: name and keyword arguments."""

    name: str
    arguments: dict[str, JSONValue]

    def to_json(self) -> dict[str, JSONValue]:
        return {"name": self.name, "arguments": self.arguments}


def parameters_schema(function: BfclFunction) -> Schema:
    """The ``arguments`` contract of a function: its parameters as JSON Schema."""
    return to_json_schema(function.parameters, f"{function.name}.parameters")


def to_json_schema(spec: dict[str, Any], where: str) -> Schema:
    """Convert one BFCL parameter document (recursively) to JSON Schema.

    Raises UsageError naming the path for anything it does not understand, so
    a changed dataset fails loudly instead of producing a looser contract.
    """
    if not isinstance(spec, dict):
        raise UsageError(f"{where}: a parameter must be a JSON object")
    unknown = set(spec) - _STRUCTURAL - set(_KEPT) - _DROPPED
    if unknown:
        raise UsageError(f"{where}: unknown BFCL key(s) {sorted(unknown)}")
    bfcl_type = spec.get("type")
    out: Schema = {}
    if bfcl_type == "any":
        out["type"] = list(ANY_TYPES)
    elif isinstance(bfcl_type, str) and bfcl_type in _TYPES:
        out["type"] = _TYPES[bfcl_type]
    else:
        raise UsageError(f"{where}: unknown BFCL type {bfcl_type!r}")
    for key in _KEPT:
        if key in spec:
            out[key] = spec[key]
    if "properties" in spec:
        out.update(_object_parts(spec, where, bfcl_type))
    elif spec.get("required"):
        # BFCL v4 has a dict naming its required keys without declaring
        # them (parallel's waste_calculation.calculate): JSON Schema says
        # the same with ``required`` alone (v3 simple has no such case)
        if bfcl_type != "dict":
            raise UsageError(f"{where}: 'required' on a {bfcl_type!r}")
        out["required"] = _names(spec, where)
    if "items" in spec:
        if out["type"] != "array":
            raise UsageError(f"{where}: 'items' on a {bfcl_type!r}")
        out["items"] = to_json_schema(spec["items"], f"{where}[]")
    return out


def _object_parts(spec: dict[str, Any], where: str, bfcl_type: object) -> Schema:
    if bfcl_type != "dict":
        raise UsageError(f"{where}: 'properties' on a {bfcl_type!r}")
    props = spec["properties"]
    if not isinstance(props, dict):
        raise UsageError(f"{where}: 'properties' must be an object")
    required = _names(spec, where)
    missing = [r for r in required if r not in props]
    if missing:
        raise UsageError(f"{where}: required parameter(s) {missing} are not declared")
    out: Schema = {
        "properties": {name: to_json_schema(sub, f"{where}.{name}") for name, sub in props.items()}
    }
    if required:
        out["required"] = list(required)
    # The checker rejects unexpected keys, so the contract does too.
    out["additionalProperties"] = False
    return out


def _names(spec: dict[str, Any], where: str) -> list[str]:
    required = spec.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise UsageError(f"{where}: 'required' must be a list of names")
    return list(required)
