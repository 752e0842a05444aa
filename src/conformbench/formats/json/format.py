"""JSON: the schema as indented JSON, and strict JSON answers.

Answer rules: the sample (see ``fences``) must be exactly one JSON text as
``json.loads`` reads it, with no YAML or JavaScript leniency. On top of
RFC 8259 we reject: NaN/Infinity (and numbers that overflow to infinity),
duplicate object keys (parsers disagree on which one wins, so the validator
could judge a value the model did not mean), nesting deeper than
``Limits.max_depth`` (checked before parsing) and text over
``Limits.max_chars``.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, ClassVar, cast

from conformbench.formats.base import (
    ParsedOutput,
    UnrepresentableValueError,
    output_formats,
    schema_formats,
)
from conformbench.formats.limits import DEFAULT_LIMITS, Limits
from conformbench.formats.reading import read_answer
from conformbench.formats.source_map import SourceMap, json_source_map
from conformbench.jsontypes import JSONValue, Schema

__all__ = ["JsonOutput", "JsonSchemaFormat", "json_depth"]

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")


class _Reject(ValueError):
    """Raised from json hooks; its message is the user-facing reason."""


def json_depth(text: str, stop_at: int) -> int:
    """Bracket nesting of JSON text, ignoring string contents; stops counting
    once ``stop_at`` is passed so hostile input costs one linear scan."""
    depth = deepest = 0
    for m in _BRACKET.finditer(_STRING.sub('""', text)):
        if m.group() in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > stop_at:
                    break
        else:
            depth -= 1
    return deepest


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _Reject(f"duplicate key {key!r}")
        out[key] = value
    return out


def _constant(name: str) -> Any:
    raise _Reject(f"{name} is not a JSON number")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Reject(f"number {text} overflows to infinity")
    return value


def loads_strict(text: str, limits: Limits = DEFAULT_LIMITS) -> JSONValue:
    """Parse one JSON text under the rules above; ValueError says why not."""
    if json_depth(text, limits.max_depth) > limits.max_depth:
        raise _Reject(f"nesting deeper than {limits.max_depth}")
    try:
        # json.loads is typed Any; it returns JSON data (objects come from _pairs)
        return cast(JSONValue, json.loads(
            text, object_pairs_hook=_pairs, parse_constant=_constant, parse_float=_float
        ))
    except _Reject:
        raise
    except json.JSONDecodeError as exc:
        raise _Reject(f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise _Reject("nesting too deep") from None
    except ValueError as exc:  # e.g. integers over Python's digit limit
        raise _Reject(f"not valid JSON: {exc}") from None


@schema_formats.register("json")
class JsonSchemaFormat:
    """The schema itself, indented, keys in source order."""

    name: ClassVar[str]
    display_name: ClassVar[str] = "JSON"
    order: ClassVar[int] = 0

    def render(self, schema: Schema | bool) -> str:
        return json.dumps(schema, indent=2, ensure_ascii=False)

    def source_map(self, schema: Schema | bool) -> SourceMap | None:
        return json_source_map(schema, self.render(schema))

    def load(self, text: str) -> Schema | bool:
        value: Schema | bool = json.loads(text)
        return value


@output_formats.register("json")
class JsonOutput:
    """Strict JSON answers (see the module docstring)."""

    name: ClassVar[str]
    display_name: ClassVar[str] = "JSON"
    order: ClassVar[int] = 0

    languages: ClassVar[tuple[str, ...]] = ("json",)

    def __init__(self, limits: Limits = DEFAULT_LIMITS) -> None:
        self.limits = limits

    def parse(self, text: str, schema: Schema | None = None) -> ParsedOutput:
        return read_answer(text, self.languages, self.limits, lambda sample: loads_strict(sample, self.limits))

    def dump(self, value: JSONValue, schema: Schema | None = None) -> str:
        try:
            return json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise UnrepresentableValueError(f"cannot write the value as JSON: {exc}") from None
