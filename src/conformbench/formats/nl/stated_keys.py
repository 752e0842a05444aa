"""Which keys of a schema the English rendering states.

JSON Schema treats a keyword it does not define as an annotation: it
constrains nothing (``decription``, ``markdownDescription``, ``x-taplo``...).
Real-world schemas carry many; the English rendering leaves them out and
ends with one note naming them, so a reader knows they exist and that
nothing was dropped silently. An unknown key that a local ``$ref`` points
into (a ``defs`` or ``refs`` container some schemas use instead of
``$defs``) holds schemas that do constrain, so it is kept and stated.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

__all__ = ["KNOWN_KEYWORDS", "annotation_note", "is_stated", "stated_unknowns", "unknown_keywords"]

#: every keyword that some JSON Schema draft (3 to 2020-12) defines
KNOWN_KEYWORDS = frozenset((
    # core
    "$schema", "$id", "id", "$ref", "$anchor", "$dynamicRef", "$dynamicAnchor", "$recursiveRef",
    "$recursiveAnchor", "$vocabulary", "$comment", "$defs", "definitions",
    # applicators
    "allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas", "prefixItems", "items",
    "additionalItems", "contains", "properties", "patternProperties", "additionalProperties",
    "propertyNames", "dependencies", "unevaluatedItems", "unevaluatedProperties", "extends", "disallow",
    # validation
    "type", "enum", "const", "multipleOf", "divisibleBy", "maximum", "exclusiveMaximum", "minimum",
    "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems",
    "maxContains", "minContains", "maxProperties", "minProperties", "required", "dependentRequired",
    # meta-data, format, content
    "title", "description", "default", "deprecated", "readOnly", "writeOnly", "examples", "format",
    "contentEncoding", "contentMediaType", "contentSchema",
))

_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies")
_SCHEMA_VALUES = ("additionalProperties", "additionalItems", "items", "contains", "not", "if", "then", "else",
                  "propertyNames", "unevaluatedItems", "unevaluatedProperties", "contentSchema")
_SCHEMA_LISTS = ("prefixItems", "items", "allOf", "anyOf", "oneOf")

#: unknown keys stated in the rendering under way (see ``stated_unknowns``)
_STATED: ContextVar[frozenset[str]] = ContextVar("nl_stated_unknowns", default=frozenset())


def _local_ref_segments(node: Any, out: set[str]) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/"):
            out.update(s.replace("~1", "/").replace("~0", "~") for s in ref[2:].split("/"))
        for value in node.values():
            _local_ref_segments(value, out)
    elif isinstance(node, list):
        for value in node:
            _local_ref_segments(value, out)


def _referenced_unknowns(schema: Any) -> frozenset[str]:
    segments: set[str] = set()
    _local_ref_segments(schema, segments)
    return frozenset(s for s in segments if s not in KNOWN_KEYWORDS)


@contextmanager
def stated_unknowns(schema: Any) -> Iterator[frozenset[str]]:
    """Within this block, the unknown keys that local ``$ref``s of ``schema``
    point into are stated (``is_stated``); all other unknown keys are not.
    (A context variable, not a parameter: the rendering is a recursion of
    small phrase functions, and only this one fact crosses it.)"""
    names = _referenced_unknowns(schema)
    token = _STATED.set(names)
    try:
        yield names
    finally:
        _STATED.reset(token)


def is_stated(key: str) -> bool:
    """Whether the English rendering states this key of a schema."""
    return key in KNOWN_KEYWORDS or key in _STATED.get()


def _subschemas(schema: dict[str, Any], kept: frozenset[str]) -> Iterator[Any]:
    for key, value in schema.items():
        if (key in _SCHEMA_MAPS or key in kept) and isinstance(value, dict):
            yield from (v for v in value.values() if isinstance(v, (dict, bool)))
        if key in _SCHEMA_VALUES and isinstance(value, dict):
            yield value
        if key in _SCHEMA_LISTS and isinstance(value, list):
            yield from value


def unknown_keywords(schema: Any, kept: frozenset[str] = frozenset()) -> list[str]:
    """The keys left out of the English rendering of ``schema``: distinct,
    in document order, from every subschema the rendering describes."""
    found: dict[str, None] = {}
    todo = [schema]
    while todo:
        node = todo.pop()
        if not isinstance(node, dict):
            continue
        found.update((k, None) for k in node if k not in KNOWN_KEYWORDS and k not in kept)
        todo.extend(reversed(list(_subschemas(node, kept))))
    return list(found)


def annotation_note(schema: Any) -> str | None:
    """The closing note naming the keys left out, or None when there are none."""
    names = unknown_keywords(schema, _referenced_unknowns(schema))
    if not names:
        return None
    listed = ", ".join(names)
    return (f"(Not stated above: keywords that JSON Schema does not define, which annotate but "
            f"constrain nothing: {listed}.)")
