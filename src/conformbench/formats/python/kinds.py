"""What a subschema renders as: the JSON types it implies, whether it is a
model class, and which of its parts are checks rather than types. Shared by
the builder (codegen.py) and the modules it drives (types.py, module.py)."""

from __future__ import annotations

from typing import Any

from conformbench.formats.python.refs import ANNOTATIONS

__all__ = ["implied_types", "is_model", "split_conditions"]

_NUMERIC = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
_STRING = ("minLength", "maxLength", "pattern", "format")
_ARRAY = ("items", "prefixItems", "contains", "minItems", "maxItems", "uniqueItems", "additionalItems",
          "unevaluatedItems")
_OBJECT = ("properties", "required", "additionalProperties", "patternProperties", "minProperties",
           "maxProperties", "dependentRequired", "dependentSchemas", "propertyNames", "dependencies",
           "unevaluatedProperties")
_GROUPS = (("number", _NUMERIC), ("string", _STRING), ("array", _ARRAY), ("object", _OBJECT))
_TYPE_ORDER = ("object", "array", "string", "integer", "number", "boolean", "null")
_NAMED = ("properties", "required", "patternProperties", "dependentRequired", "dependentSchemas", "dependencies")


def implied_types(schema: dict[str, Any]) -> list[str] | None:
    """The declared types, or those the type-specific keywords imply; None if neither."""
    declared = schema.get("type")
    if isinstance(declared, str):
        return [declared]
    if isinstance(declared, list):
        return [t for t in _TYPE_ORDER if t in declared]
    found = [kind for kind, keys in _GROUPS if any(k in schema for k in keys)]
    return found or None


def is_model(schema: Any) -> bool:
    """Rendered as a BaseModel class (an object with named properties)."""
    if not isinstance(schema, dict) or "enum" in schema or "const" in schema:
        return False
    if implied_types(schema) != ["object"]:
        return False
    return any(k in schema for k in _NAMED) or schema.get("additionalProperties") is False


def split_conditions(schema: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, Any]]]:
    """The schema without the parts stated as checks (``not``, ``if``, and
    ``anyOf``/``oneOf`` whose branches only add conditions), and those parts."""
    out: list[tuple[str, Any]] = []
    if "not" in schema:
        out.append(("not", {"not": schema["not"]}))
    if "if" in schema and ("then" in schema or "else" in schema):
        out.append(("if", {k: schema[k] for k in ("if", "then", "else") if k in schema}))
    rest = schema
    for key in ("anyOf", "oneOf"):
        branches = rest.get(key)
        others = set(rest) - ANNOTATIONS - {"anyOf", "oneOf"}
        if isinstance(branches, list) and others and all(_fragment_only(b) for b in branches):
            out.append((key, {key: branches}))
            rest = {k: v for k, v in rest.items() if k != key}
    return rest, out


def _fragment_only(branch: Any) -> bool:
    """A branch that adds conditions without being a type of its own."""
    shaping = ("type", "enum", "const", "$ref", "properties", "items", "prefixItems", "anyOf", "oneOf",
               "allOf", "patternProperties", "additionalProperties")
    return isinstance(branch, dict) and not any(k in branch for k in shaping)
