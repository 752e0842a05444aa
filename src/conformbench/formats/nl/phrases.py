"""Phrase tables for the English schema rendering (``formats.nl.format``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from conformbench.formats.nl.stated_keys import KNOWN_KEYWORDS, is_stated

__all__ = [
    "ARRAY_HEAD",
    "HANDLED",
    "NUMBER_HEAD",
    "OBJECT_HEAD",
    "STRING_HEAD",
    "Lines",
    "head_phrases",
    "lit",
    "other_lines",
    "type_phrase",
]

#: (indent level, text) pairs
Lines = list[tuple[int, str]]
Nested = Callable[[str, Any, int], Lines]

NUMBER_HEAD = ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum", "multipleOf")
STRING_HEAD = ("minLength", "maxLength", "pattern", "format")
ARRAY_HEAD = ("minItems", "maxItems", "uniqueItems")
OBJECT_HEAD = ("minProperties", "maxProperties")
#: keywords stated by formats.nl.format itself rather than by other_lines
HANDLED = frozenset(
    ("type", "enum", "const", "items", "prefixItems", "additionalItems", "contains", "minContains", "maxContains",
     "properties", "required", "patternProperties", "additionalProperties", "dependentRequired")
    + NUMBER_HEAD + STRING_HEAD + ARRAY_HEAD + OBJECT_HEAD
)

_ARTICLE = {
    "string": "a string", "integer": "an integer", "number": "a number", "boolean": "a boolean",
    "null": "null", "array": "an array", "object": "an object",
}


def lit(value: Any, regex: bool = False) -> str:
    """A literal as written in the text: JSON, or a regex in backticks."""
    if regex and isinstance(value, str) and "`" not in value and value.isprintable():
        return f"`{value}`"
    return json.dumps(value, ensure_ascii=False)


def _plural(n: Any, word: str, plural: str) -> str:
    return f"{lit(n)} {word if n == 1 else plural}"


#: keywords that constrain through other schemas, stated on lines below the
#: head: a schema with one of them and no type is not "any value"
_BY_REFERENCE = ("$ref", "$dynamicRef", "$recursiveRef", "allOf", "anyOf", "oneOf", "not", "if")


def type_phrase(schema: dict[str, Any]) -> str:
    declared = schema.get("type")
    if declared is None:
        if "enum" in schema or "const" in schema:
            return ""
        return "a value as follows" if any(k in schema for k in _BY_REFERENCE) else "any value"
    names = [declared] if isinstance(declared, str) else list(declared)
    words = [_ARTICLE.get(str(n), lit(n)) for n in names]
    joined = " or ".join(words) if len(words) < 3 else ", ".join(words[:-1]) + " or " + words[-1]
    return f"{joined} (type)"


#: drafts 3 and 4 write exclusive bounds as booleans beside minimum/maximum
_BOOLEAN_BOUND = {
    ("exclusiveMinimum", True): "the minimum itself excluded",
    ("exclusiveMinimum", False): "the minimum itself allowed",
    ("exclusiveMaximum", True): "the maximum itself excluded",
    ("exclusiveMaximum", False): "the maximum itself allowed",
}


def _head_phrase(key: str, value: Any) -> str:
    if isinstance(value, bool) and (key, value) in _BOOLEAN_BOUND:
        return f"{_BOOLEAN_BOUND[key, value]} ({key})"
    n = lit(value)
    table = {
        "minimum": f"at least {n}",
        "exclusiveMinimum": f"greater than {n}",
        "maximum": f"at most {n}",
        "exclusiveMaximum": f"less than {n}",
        "multipleOf": f"a multiple of {n}",
        "minLength": f"at least {_plural(value, 'character', 'characters')} long",
        "maxLength": f"at most {_plural(value, 'character', 'characters')} long",
        "pattern": f"matching the regular expression {lit(value, regex=True)}",
        "format": f"in the {n} format",
        "minItems": f"with at least {_plural(value, 'item', 'items')}",
        "maxItems": f"with at most {_plural(value, 'item', 'items')}",
        "uniqueItems": "with no two items equal" if value is True else "with repeated items allowed",
        "minProperties": f"with at least {_plural(value, 'property', 'properties')}",
        "maxProperties": f"with at most {_plural(value, 'property', 'properties')}",
    }
    return f"{table[key]} ({key})"


def head_phrases(schema: dict[str, Any], keys: tuple[str, ...]) -> list[str]:
    return [_head_phrase(key, schema[key]) for key in keys if key in schema]


_ANNOTATION = {
    "title": "Title",
    "description": "Description",
    "$comment": "Comment",
    "default": "Default value",
    "examples": "Examples",
    "$schema": "Written for the JSON Schema dialect",
    "$id": "Identifier",
    "id": "Identifier",
    "deprecated": "Deprecated",
    "readOnly": "Read-only",
    "writeOnly": "Write-only",
}

_SCHEMA_LIST = {
    "allOf": "It must match all of these schemas (allOf):",
    "anyOf": "It must match at least one of these schemas (anyOf):",
    "oneOf": "It must match exactly one of these schemas (oneOf):",
}

_SUBSCHEMA = {
    "not": "It must NOT match this schema (not)",
    "if": "If it matches this schema (if)",
    "then": "then it must match (then)",
    "else": "otherwise it must match (else)",
    "propertyNames": "If it is an object, every property name must be (propertyNames)",
    "unevaluatedItems": "Items not covered by the keywords above must be (unevaluatedItems)",
    "unevaluatedProperties": "Properties not covered by the keywords above must be (unevaluatedProperties)",
    "contentSchema": "Its decoded content must be (contentSchema)",
}


def _keyed_lines(key: str, value: dict[str, Any], indent: int, nested: Nested) -> Lines:
    if key == "dependentSchemas":
        out: Lines = []
        for name, sub in value.items():
            out += nested(f"If {lit(name)} is present, the object must also match (dependentSchemas)", sub, indent)
        return out
    out = [(indent, f"- Named schemas ({key}):")]
    for name, sub in value.items():
        out += nested(lit(name), sub, indent + 1)
    return out


def _one_line(key: str, value: Any, indent: int, nested: Nested) -> Lines:
    if key in _ANNOTATION:
        return [(indent, f"- {_ANNOTATION[key]} ({key}): {lit(value)}.")]
    if key in _SCHEMA_LIST and isinstance(value, list):
        out: Lines = [(indent, "- " + _SCHEMA_LIST[key])]
        for i, sub in enumerate(value):
            out += nested(f"Schema {i + 1}", sub, indent + 1)
        return out
    if key in _SUBSCHEMA:
        return nested(_SUBSCHEMA[key], value, indent)
    if key in ("$defs", "definitions", "dependentSchemas") and isinstance(value, dict):
        return _keyed_lines(key, value, indent, nested)
    if key == "dependencies" and isinstance(value, dict):
        return _dependencies(value, indent, nested)
    if key == "$ref":
        return [(indent, f"- It must also match {_ref_target(value)} ($ref).")]
    if key not in KNOWN_KEYWORDS and _holds_schemas(value):  # a container a $ref points into
        return _keyed_lines(key, value, indent, nested)
    return [(indent, f"- Keyword {key} ({key}): {lit(value)}.")]


def _ref_target(ref: Any) -> str:
    """'the schema named "x" in definitions' for a plain local pointer to a
    named schema, else 'the schema at "<ref>"'."""
    parts = ref[2:].split("/") if isinstance(ref, str) and ref.startswith("#/") else []
    if len(parts) == 2 and "~" not in ref and parts[1]:
        return f"the schema named {lit(parts[1])} in {parts[0]}, at {lit(ref)}"
    return f"the schema at {lit(ref)}"


def _holds_schemas(value: Any) -> bool:
    return isinstance(value, dict) and bool(value) and all(isinstance(v, (dict, bool)) for v in value.values())


def _dependencies(value: dict[str, Any], indent: int, nested: Nested) -> Lines:
    """Drafts 4 to 7: a list of names (now dependentRequired) or a schema
    (now dependentSchemas) per property."""
    out: Lines = []
    for name, rule in value.items():
        if isinstance(rule, list):
            names = ", ".join(lit(n) for n in rule) if rule else "nothing else"
            out.append((indent, f"- If {lit(name)} is present, these must also be present (dependencies): {names}."))
        else:
            out += nested(f"If {lit(name)} is present, the object must also match (dependencies)", rule, indent)
    return out


def other_lines(schema: dict[str, Any], indent: int, nested: Nested, annotations: bool) -> Lines:
    """Lines for the keywords not in HANDLED, in schema order: the
    annotations (title, description...) or all the others."""
    out: Lines = []
    for key, value in schema.items():
        if key not in HANDLED and (key in _ANNOTATION) == annotations and is_stated(key):
            out += _one_line(key, value, indent, nested)
    return out
