"""Reading a JSON Schema into shapes, and the list of keywords a grammar
built from them leaves to the validator.

Annotation keywords (``title``, ``description``...) constrain nothing and
are skipped. Keywords of types a position cannot hold are vacuous
(``minLength`` on an integer) and are skipped too. Everything else is
either stated by the shape or recorded as unenforced, with a reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from conformbench.engines.grammars import numbers
from conformbench.engines.grammars.objects import read_object
from conformbench.engines.grammars.shapes import (
    ALL_KINDS,
    ArrayRule,
    Bound,
    KeyClass,
    Member,
    NumberRule,
    ObjectRule,
    Shape,
    StringRule,
    UnenforcedKeyword,
)
from conformbench.engines.grammars.strings import FORMATS, pattern_regex, regex_ok
from conformbench.errors import UnsupportedSchemaError
from conformbench.formats.xml.guide import Guide, item_guide, json_type, property_guide
from conformbench.jsontypes import JSONValue
from conformbench.validator.pattern_size import PatternTooLarge, check_size

__all__ = ["ShapeReading", "const_shape", "read_shape", "unenforced_keywords"]

#: keywords a grammar never states
_NEVER = {
    "uniqueItems": "a context-free grammar cannot compare items with each other",
    "contains": "counting matching items is not expressed",
    "allOf": "combinators are not compiled",
    "anyOf": "combinators are not compiled",
    "oneOf": "combinators are not compiled",
    "not": "combinators are not compiled",
    "if": "conditionals are not compiled",
    "$ref": "references are not followed",
    "$dynamicRef": "references are not followed",
    "dependentSchemas": "conditional subschemas are not compiled",
    "dependencies": "conditional subschemas are not compiled",
    "propertyNames": "key schemas are not compiled",
    "unevaluatedItems": "evaluation tracking is not compiled",
    "unevaluatedProperties": "evaluation tracking is not compiled",
    "additionalItems": "draft-4 tuples are not compiled",
}
_INACTIVE_WITHOUT = {"minContains": "contains", "maxContains": "contains", "then": "if", "else": "if"}
_STRING_TYPES = {"string"}
_NUMBER_TYPES = {"integer", "number"}


@dataclass(frozen=True)
class ShapeReading:
    shape: Shape
    unenforced: tuple[UnenforcedKeyword, ...]


def _kinds(declared: Any) -> frozenset[str]:
    if declared is None:
        return ALL_KINDS - {"integer"}
    names = {declared} if isinstance(declared, str) else set(declared)
    if {"integer", "number"} <= names:
        names.discard("integer")
    return frozenset(names) & ALL_KINDS


def _decimal(value: Any) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return Decimal(value) if isinstance(value, int) else Decimal(repr(value))


class _Reader:
    def __init__(self) -> None:
        self.unenforced: list[UnenforcedKeyword] = []
        self.any = Shape(anything=True)
        self.any.obj = ObjectRule(extras=[KeyClass(None, (), self.any)])
        self.any.array = ArrayRule(items=self.any)

    def note(self, keyword: str, path: str, reason: str) -> None:
        self.unenforced.append(UnenforcedKeyword(keyword, f"{path}/{keyword}", reason))

    def shape(self, schema: Any, path: str, guide: Guide) -> Shape | None:
        """The shape of ``schema``; None when no value is valid (``false``)."""
        if schema is False:
            return None
        if not isinstance(schema, dict):
            return self.any
        for keyword, reason in _NEVER.items():
            if keyword in schema and not (keyword == "uniqueItems" and schema[keyword] is False):
                self.note(keyword, path, reason)
        for keyword, needs in _INACTIVE_WITHOUT.items():
            if keyword in schema and needs in schema:
                self.note(keyword, path, f"follows {needs}, which is not compiled")
        if "enum" in schema or "const" in schema:
            return self._choices(schema, path, guide)
        kinds = _kinds(schema.get("type"))
        shape = Shape(kinds=kinds, guide=guide, anything=kinds == ALL_KINDS - {"integer"} and not _constrains(schema))
        if kinds & _STRING_TYPES:
            shape.string = self._string(schema, path)
        if kinds & _NUMBER_TYPES:
            shape.number = self._number(schema, path, "integer" in kinds)
        if "object" in kinds:
            shape.obj = self._object(schema, path, guide)
        if "array" in kinds:
            shape.array = self._array(schema, path, guide)
        return shape

    def _choices(self, schema: dict[str, Any], path: str, guide: Guide) -> Shape:
        from conformbench.errors import SchemaError
        from conformbench.validator.schema_validator import validator_for

        values = [schema["const"]] if "const" in schema else list(schema.get("enum") or [])
        try:
            check = validator_for(schema)
            kept = [v for v in values if check.is_valid(v)]
        except (SchemaError, RecursionError):
            kept = values
            for keyword in sorted(set(schema) - {"enum", "const"} - _NOT_CONSTRAINTS):
                self.note(keyword, path, "beside enum/const in a subschema that cannot be checked alone")
        if not kept:
            raise UnsupportedSchemaError("grammar", f"no enum/const value at {path or '/'} is valid")
        kinds = frozenset("integer" if json_type(v) == "number" and isinstance(v, int) else json_type(v)
                          for v in kept)
        return Shape(kinds=kinds, choices=tuple(kept), guide=guide)

    def _string(self, schema: dict[str, Any], path: str) -> StringRule:
        regexes: list[str] = []
        empty_ok = True
        pattern = schema.get("pattern")
        if isinstance(pattern, str):
            empty_ok = _matches_empty(pattern)
            translated = pattern_regex(pattern)
            if translated is not None and regex_ok(translated):
                regexes.append(translated)
            else:
                self.note("pattern", path, "the regex uses syntax the grammar's regex engine lacks")
        fmt = schema.get("format")
        if isinstance(fmt, str):
            if fmt in FORMATS:
                regexes.append(FORMATS[fmt])
                empty_ok = False
            elif fmt in _CHECKED_FORMATS:
                self.note("format", path, f"format {fmt!r} has no grammar")
        shortest = schema.get("minLength", 0)
        shortest = shortest if isinstance(shortest, int) else 0
        longest = schema.get("maxLength")
        return StringRule(shortest, longest if isinstance(longest, int) else None, tuple(regexes),
                          empty_ok and shortest == 0)

    def _bound(self, schema: dict[str, Any], path: str, inclusive: str, exclusive: str, lower: bool) -> Bound | None:
        best: Bound | None = None
        for keyword, is_exclusive in ((inclusive, False), (exclusive, True)):
            if keyword not in schema:
                continue
            value = _decimal(schema[keyword])
            if value is None:
                self.note(keyword, path, "not a number (draft-4 boolean form)")
                continue
            candidate = Bound(value, is_exclusive)
            if best is None or (candidate.value > best.value if lower else candidate.value < best.value):
                best = candidate
            elif candidate.value == best.value and is_exclusive:
                best = candidate
        return best

    def _number(self, schema: dict[str, Any], path: str, integer: bool) -> NumberRule:
        lower = self._bound(schema, path, "minimum", "exclusiveMinimum", True)
        upper = self._bound(schema, path, "maximum", "exclusiveMaximum", False)
        step: Decimal | None = None
        if "multipleOf" in schema:
            value = _decimal(schema["multipleOf"])
            if value is not None and numbers.stated_step(value):
                step = value
            else:
                self.note("multipleOf", path, "only steps exact in binary whose multiples show in their last digits")
        return NumberRule(lower, upper, step)

    def _object(self, schema: dict[str, Any], path: str, guide: Guide) -> ObjectRule:
        return read_object(self, schema, path, guide)

    def _array(self, schema: dict[str, Any], path: str, guide: Guide) -> ArrayRule:
        prefix: list[Shape] = []
        max_items = schema.get("maxItems") if isinstance(schema.get("maxItems"), int) else None
        for i, sub in enumerate(schema.get("prefixItems") or []):
            shape = self.shape(sub, f"{path}/prefixItems/{i}", item_guide(guide, i))
            if shape is None:
                max_items = i if max_items is None else min(max_items, i)
                break
            prefix.append(shape)
        items: Shape | None = self.any
        if "items" in schema:
            items = self.shape(schema["items"], f"{path}/items", item_guide(guide, len(prefix)))
        min_items = schema.get("minItems", 0)
        return ArrayRule(prefix, items, min_items if isinstance(min_items, int) else 0, max_items)


#: keywords that never constrain a value
_NOT_CONSTRAINTS = frozenset({
    "$schema", "$id", "$anchor", "$dynamicAnchor", "$comment", "$defs", "definitions", "$vocabulary",
    "title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly",
    "contentEncoding", "contentMediaType", "contentSchema",
})
_CHECKED_FORMATS = frozenset({
    "date", "date-time", "duration", "email", "hostname", "idn-email", "idn-hostname", "ipv4", "ipv6",
    "iri", "iri-reference", "json-pointer", "regex", "relative-json-pointer", "time", "uri",
    "uri-reference", "uri-template", "uuid",
})


def _matches_empty(pattern: str) -> bool:
    try:
        check_size(pattern)
        return re.search(pattern, "") is not None
    except (re.error, PatternTooLarge):
        return True


def _constrains(schema: dict[str, Any]) -> bool:
    return any(k not in _NOT_CONSTRAINTS for k in schema)


def read_shape(schema: Any) -> ShapeReading:
    """The shape of a whole schema and what it leaves unenforced;
    UnsupportedSchemaError when the grammar would accept nothing."""
    reader = _Reader()
    shape = reader.shape(schema, "", (schema,))
    if shape is None:
        raise UnsupportedSchemaError("grammar", "the schema is false: no value is valid")
    return ShapeReading(shape, tuple(reader.unenforced))


def unenforced_keywords(schema: Any) -> list[str]:
    """Keywords of ``schema`` (distinct, first occurrence first) that the
    YAML and XML grammars leave to the validator."""
    return list(dict.fromkeys(u.keyword for u in read_shape(schema).unenforced))


def const_shape(value: JSONValue, guide: Guide) -> Shape:
    """A container const as structure: exactly these members or items."""
    if isinstance(value, dict):
        members = [Member(k, const_shape(v, property_guide(guide, k)), True) for k, v in value.items()]
        return Shape(kinds=frozenset({"object"}), obj=ObjectRule(members=members), guide=guide)
    if isinstance(value, list):
        prefix = [const_shape(v, item_guide(guide, i)) for i, v in enumerate(value)]
        rule = ArrayRule(prefix, None, len(value), len(value))
        return Shape(kinds=frozenset({"array"}), array=rule, guide=guide)
    kind = "integer" if isinstance(value, int) and not isinstance(value, bool) else json_type(value)
    return Shape(kinds=frozenset({kind}), choices=(value,), guide=guide)
