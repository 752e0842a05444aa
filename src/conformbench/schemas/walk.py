"""Walking a schema by its applicators: which keywords it uses (never
mistaking a property name for a keyword), how deep it nests, its root type."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

__all__ = ["depth_of", "keywords_of", "root_type_of", "subschemas"]

_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_VALUES = (
    "items", "additionalProperties", "contains", "not", "if", "then", "else",
    "propertyNames", "unevaluatedItems", "unevaluatedProperties", "additionalItems",
)
_SCHEMA_LISTS = ("prefixItems", "allOf", "anyOf", "oneOf")


def subschemas(schema: Any) -> Iterator[Any]:
    """The direct subschemas of a schema, in document order."""
    if not isinstance(schema, dict):
        return
    for key, value in schema.items():
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            yield from value.values()
        elif key in _SCHEMA_VALUES and isinstance(value, (dict, bool)):
            yield value
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            yield from value


def keywords_of(schema: Any) -> set[str]:
    """Every keyword used anywhere in the schema."""
    if not isinstance(schema, dict):
        return set()
    found = set(schema)
    for sub in subschemas(schema):
        found |= keywords_of(sub)
    return found


def depth_of(schema: Any) -> int:
    """Nesting depth: 1 for a schema without subschemas."""
    return 1 + max((depth_of(s) for s in subschemas(schema)), default=0)


def root_type_of(schema: Any) -> str:
    """The root's type name, or enum / const / any / several."""
    if not isinstance(schema, dict):
        return "any" if schema is True else "none"
    declared = schema.get("type")
    if isinstance(declared, str):
        return declared
    if isinstance(declared, list):
        return "several"
    for key in ("enum", "const"):
        if key in schema:
            return key
    return "any"
