"""JSON Schema -> Pydantic v2 source that accepts exactly the same values.

How each keyword is written (docs/formats.md has the table):

* ``type``: ``None``, ``StrictBool``, ``Integer`` (``StrictInt`` that also
  takes whole floats such as 1.0, as JSON Schema does), ``Number``
  (``StrictInt | StrictFloat``: exact for integers of any size),
  ``StrictStr``, ``list[...]``, a ``BaseModel`` class (or ``dict[str, ...]``
  when the object has no named properties); several types are a union, and
  a schema without ``type`` is the union of all six JSON types, each with
  the keywords that apply to it. Strict types, because JSON Schema never
  coerces ``"1"`` to 1.
* ``enum``/``const``: ``Literal[...]`` of the values the rest of the schema
  accepts, plus ``JsonLiteral`` when ``==`` would confuse booleans and
  numbers; arrays/objects among the values go through ``one_of``.
* numeric bounds, lengths, ``pattern``, integer ``multipleOf``, ``minItems``,
  ``maxItems``: ``Field(...)`` (bounds on integers rounded inward, since
  Pydantic wants integer bounds there); patterns use Python's ``re``
  (``regex_engine="python-re"``), the reading a Python programmer expects;
  the reference validator reads them as ECMA-262, which differs on
  non-ASCII input (docs/formats.md).
* ``uniqueItems``, ``contains``/``minContains``/``maxContains``,
  ``prefixItems``, ``format``, fractional ``multipleOf``: validators in
  ``Annotated[...]`` from the helper snippets.
* ``properties``/``required``: fields (optional ones default to Pydantic's
  ``MISSING`` sentinel, so an explicit null is still validated);
  ``additionalProperties: false`` is ``extra="forbid"``;
  ``patternProperties``, schema-valued ``additionalProperties``,
  ``minProperties``/``maxProperties`` and ``dependentRequired`` are checked
  in a ``model_validator(mode="before")`` on the raw input.

Anything else that constrains values raises UnrenderableSchemaError.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from conformbench.formats.base import UnrenderableSchemaError
from conformbench.formats.python_models import assemble, build_model
from conformbench.formats.python_source import (
    Names,
    annotation_extras,
    literal,
    regex_literal,
)
from conformbench.validation.validator import validator_for

__all__ = ["SUPPORTED_KEYWORDS", "TypeBuilder", "render_pydantic"]

_NUMERIC = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
_STRING = ("minLength", "maxLength", "pattern", "format")
_ARRAY = ("items", "prefixItems", "contains", "minContains", "maxContains", "minItems", "maxItems", "uniqueItems")
_OBJECT = (
    "properties", "required", "additionalProperties", "patternProperties",
    "minProperties", "maxProperties", "dependentRequired",
)
_ANNOTATIONS = (
    "title", "description", "examples", "default", "$comment", "deprecated",
    "readOnly", "writeOnly", "$schema", "$id",
)
SUPPORTED_KEYWORDS = frozenset(
    ("type", "enum", "const") + _NUMERIC + _STRING + _ARRAY + _OBJECT + _ANNOTATIONS
)
_TYPE_ORDER = ("null", "boolean", "integer", "number", "string", "array", "object")


@dataclass
class TypeBuilder:
    """Collects classes and helpers while turning subschemas into type expressions."""

    classes: list[str] = field(default_factory=list)
    names: Names = field(default_factory=Names)
    helpers: set[str] = field(default_factory=set)

    # ------------------------------------------------------------ entry

    def type_expr(self, schema: Any, hint: str) -> str:
        if schema is True:
            return "Any"
        if schema is False:
            return self.use("Nothing")
        self.check_keywords(schema)
        expr = self._value_expr(schema, hint)
        extras = annotation_extras(schema)
        return f"Annotated[{expr}, Field({extras})]" if extras else expr

    def check_keywords(self, schema: Any) -> None:
        if not isinstance(schema, dict):
            raise UnrenderableSchemaError("python", "a schema must be an object or boolean")
        unknown = [k for k in schema if k not in SUPPORTED_KEYWORDS]
        if unknown:
            raise UnrenderableSchemaError("python", f"keyword {unknown[0]!r} is not supported")

    def check_regex(self, pattern: str) -> None:
        _check_regex(pattern)

    def use(self, helper: str) -> str:
        self.helpers.add(helper)
        return helper

    def _value_expr(self, schema: dict[str, Any], hint: str) -> str:
        if "enum" in schema or "const" in schema:
            return self._enum_expr(schema)
        declared = schema.get("type", list(_TYPE_ORDER))
        types = [declared] if isinstance(declared, str) else list(declared)
        if "number" in types and "integer" in types:
            types.remove("integer")
        if "type" not in schema and not any(k in schema for k in _NUMERIC + _STRING + _ARRAY + _OBJECT):
            return "Any"
        branches = [self._branch(t, schema, hint) for t in _TYPE_ORDER if t in types]
        return " | ".join(branches) if branches else self.use("Nothing")

    def _branch(self, kind: str, schema: dict[str, Any], hint: str) -> str:
        if kind == "null":
            return "None"
        if kind == "boolean":
            return "StrictBool"
        if kind in ("integer", "number"):
            return self._number(kind, schema)
        if kind == "string":
            return self._string(schema)
        if kind == "array":
            return self._array(schema, hint)
        return self._object(schema, hint)

    # ------------------------------------------------------------ scalars

    def _enum_expr(self, schema: dict[str, Any]) -> str:
        rest = {k: v for k, v in schema.items() if k not in ("enum", "const") and k not in _ANNOTATIONS}
        candidates = list(schema["enum"]) if "enum" in schema else [schema["const"]]
        if "enum" in schema and "const" in schema:
            enum_check = validator_for({"enum": schema["enum"]})
            candidates = [schema["const"]] if enum_check.is_valid(schema["const"]) else []
        rest_check = validator_for(rest)
        values = [v for v in candidates if rest_check.is_valid(v)]
        if not values:
            return self.use("Nothing")
        if any(isinstance(v, (list, dict)) for v in values):
            self.use("one_of")
            return f"Annotated[Any, one_of({', '.join(literal(v) for v in values)})]"
        has_bool = any(isinstance(v, bool) for v in values)
        has_number = any(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
        options = ", ".join(literal(v) for v in _dedupe(values))
        if has_bool and has_number:
            self.use("one_of")
            return f"Annotated[Any, one_of({options})]"
        if has_bool or has_number:
            return f"Annotated[Literal[{options}], {self.use('JsonLiteral')}]"
        return f"Literal[{options}]"

    def _number(self, kind: str, schema: dict[str, Any]) -> str:
        integer = kind == "integer"
        base = self.use("Integer") if integer else self.use("Number")
        args: list[str] = []
        validators: list[str] = []
        for key, name, up in (("minimum", "ge", True), ("exclusiveMinimum", "gt", True),
                              ("maximum", "le", False), ("exclusiveMaximum", "lt", False)):
            if key in schema:
                args.append(_bound(name, schema[key], integer, up))
        step = schema.get("multipleOf")
        if step is not None:
            if integer and isinstance(step, int):
                args.append(f"multiple_of={step}")
            else:
                validators.append(f"{self.use('multiple_of')}({literal(step)})")
        return _annotated(base, args, validators)

    def _string(self, schema: dict[str, Any]) -> str:
        args = []
        if "minLength" in schema:
            args.append(f"min_length={int(schema['minLength'])}")
        if "maxLength" in schema:
            args.append(f"max_length={int(schema['maxLength'])}")
        if "pattern" in schema:
            _check_regex(schema["pattern"])
            args.append(f"pattern={regex_literal(schema['pattern'])}")
        validators = []
        if "format" in schema:
            validators.append(f"{self.use('json_format')}({literal(schema['format'])})")
        return _annotated("StrictStr", args, validators)

    # ------------------------------------------------------------ arrays

    def _array(self, schema: dict[str, Any], hint: str) -> str:
        args = []
        if "minItems" in schema:
            args.append(f"min_length={int(schema['minItems'])}")
        if "maxItems" in schema:
            args.append(f"max_length={int(schema['maxItems'])}")
        validators = []
        items = schema.get("items", True)
        prefix = schema.get("prefixItems")
        if prefix is not None:
            types = [self.type_expr(s, f"{hint}Item{i + 1}") for i, s in enumerate(prefix)]
            rest = "" if items is True else f", rest={self.type_expr(items, f'{hint}Item')}"
            validators.append(f"{self.use('prefix_items')}({', '.join(types)}{rest})")
            base = "list[Any]"
        else:
            base = f"list[{self.type_expr(items, f'{hint}Item')}]"
        if schema.get("uniqueItems") is True:
            validators.append(f"BeforeValidator({self.use('unique_items')})")
        if "contains" in schema:
            validators.append(self._contains(schema, hint))
        return _annotated(base, args, validators)

    def _contains(self, schema: dict[str, Any], hint: str) -> str:
        parts = [self.type_expr(schema["contains"], f"{hint}Match")]
        if "minContains" in schema:
            parts.append(f"min_count={int(schema['minContains'])}")
        if "maxContains" in schema:
            parts.append(f"max_count={int(schema['maxContains'])}")
        return f"{self.use('contains')}({', '.join(parts)})"

    # ------------------------------------------------------------ objects

    def _object(self, schema: dict[str, Any], hint: str) -> str:
        named = any(k in schema for k in ("properties", "required", "patternProperties", "dependentRequired"))
        extra = schema.get("additionalProperties", True)
        if not named:
            args = []
            if "minProperties" in schema:
                args.append(f"min_length={int(schema['minProperties'])}")
            if "maxProperties" in schema:
                args.append(f"max_length={int(schema['maxProperties'])}")
            value = "Any" if extra is True else self.type_expr(extra, f"{hint}Value")
            return _annotated(f"dict[str, {value}]", args, [])
        return build_model(self, schema, "SchemaObject" if hint == "Schema" else hint)


def _check_regex(pattern: str) -> None:
    """Generated models use Python's re (see the module docstring)."""
    try:
        re.compile(pattern)
    except re.error as exc:
        raise UnrenderableSchemaError("python", f"pattern {pattern!r} is not a Python regular expression: {exc}") from None


def _dedupe(values: list[Any]) -> list[Any]:
    out: list[Any] = []
    for v in values:
        if not any(type(v) is type(o) and v == o for o in out):
            out.append(v)
    return out


def _bound(name: str, value: float, integer: bool, up: bool) -> str:
    """``Field`` bound; on integers a fractional bound is rounded inward."""
    if integer and (isinstance(value, float) and not value.is_integer()):
        return f"{'ge' if up else 'le'}={math.ceil(value) if up else math.floor(value)}"
    if integer:
        return f"{name}={int(value)}"
    return f"{name}={literal(value)}"


def _annotated(base: str, args: list[str], validators: list[str]) -> str:
    meta = ([f"Field({', '.join(args)})"] if args else []) + validators
    return f"Annotated[{base}, {', '.join(meta)}]" if meta else base


def render_pydantic(schema: Any) -> str:
    """Pydantic v2 module source whose class ``Schema`` validates like ``schema``."""
    return assemble(TypeBuilder(), schema)
