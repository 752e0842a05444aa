"""What a JSON Schema says about the JSON type at each position of a value.

Used by schema-guided XML: an element without a ``type`` attribute is read
as the type the schema allows there. A position is described by a *guide*:
the tuple of subschemas that all apply to it (``allOf`` members, a property
schema plus matching ``patternProperties``...). Keywords that do not fix a
type (``anyOf``, ``$ref``...) simply leave more types open; the XML reader
then falls back to reading the content (see ``formats.xml.codec``).
"""

from __future__ import annotations

from typing import Any

from conformbench.jsontypes import JSONValue
from conformbench.validator.patterns import matches

__all__ = ["ALL_TYPES", "Guide", "allowed_types", "item_guide", "json_type", "property_guide"]

#: subschemas (dicts or booleans) that all apply to one position
Guide = tuple[Any, ...]

#: JSON types as guided XML distinguishes them ("integer" counts as "number":
#: both read the same numeric text)
ALL_TYPES = frozenset({"null", "boolean", "number", "string", "array", "object"})


def json_type(value: JSONValue) -> str:
    """The JSON type name of a Python value from ``json.loads``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _expand(guide: Guide) -> list[Any]:
    """The guide's subschemas with ``allOf`` members flattened in."""
    out: list[Any] = []
    stack = list(reversed(guide))
    while stack:
        schema = stack.pop()
        out.append(schema)
        if isinstance(schema, dict) and isinstance(schema.get("allOf"), list):
            stack.extend(reversed(schema["allOf"]))
    return out


def _types_of(schema: dict[str, Any]) -> frozenset[str]:
    allowed = ALL_TYPES
    declared = schema.get("type")
    if isinstance(declared, str):
        declared = [declared]
    if isinstance(declared, list):
        names = {"number" if t == "integer" else t for t in declared if isinstance(t, str)}
        allowed = allowed & names
    if "const" in schema:
        allowed = allowed & {json_type(schema["const"])}
    elif isinstance(schema.get("enum"), list):
        allowed = allowed & {json_type(v) for v in schema["enum"]}
    return allowed


def allowed_types(guide: Guide) -> frozenset[str]:
    """JSON types a valid value may have at this position; ALL_TYPES when
    the guide pins nothing (or contradicts itself, so nothing is valid)."""
    allowed = ALL_TYPES
    for schema in _expand(guide):
        if schema is False:
            return ALL_TYPES
        if isinstance(schema, dict):
            allowed = allowed & _types_of(schema)
    return allowed or ALL_TYPES


def property_guide(guide: Guide, key: str) -> Guide:
    """Subschemas that apply to the value of property ``key``."""
    out: list[Any] = []
    for schema in _expand(guide):
        if not isinstance(schema, dict):
            continue
        matched = False
        props = schema.get("properties")
        if isinstance(props, dict) and key in props:
            out.append(props[key])
            matched = True
        patterns = schema.get("patternProperties")
        if isinstance(patterns, dict):
            for pattern, sub in patterns.items():
                if _search(pattern, key):
                    out.append(sub)
                    matched = True
        if not matched and "additionalProperties" in schema:
            out.append(schema["additionalProperties"])
    return tuple(out)


def item_guide(guide: Guide, index: int) -> Guide:
    """Subschemas that apply to array item ``index``."""
    out: list[Any] = []
    for schema in _expand(guide):
        if not isinstance(schema, dict):
            continue
        prefix = schema.get("prefixItems")
        if isinstance(prefix, list) and index < len(prefix):
            out.append(prefix[index])
        elif "items" in schema:
            out.append(schema["items"])
    return tuple(out)


def _search(pattern: str, key: str) -> bool:
    """The validator's bounded matcher (a key is model output: a hostile
    pattern must not hang the parser); undecided or bad: no match."""
    return isinstance(pattern, str) and matches(pattern, key)
