"""Handpicked schemas in the shape our generator produces (draft 2020-12,
the supported keyword set, nesting depth 3+), with instances on both sides
of each constraint. Their renderings are the golden files."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["GOLDEN", "GoldenCase"]

_DRAFT = "https://json-schema.org/draft/2020-12/schema"


@dataclass(frozen=True)
class GoldenCase:
    name: str
    schema: Any
    valid: tuple[Any, ...]
    invalid: tuple[Any, ...]
    #: instances (from valid or invalid) that the Pydantic rendering is known
    #: to judge differently, each for a reason docs/formats.md lists
    python_differs: tuple[Any, ...] = ()


_PERSON = {
    "$schema": _DRAFT,
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 40, "pattern": "^[A-Z][a-z]+$"},
        "email": {"type": "string", "format": "email"},
        "joined": {"type": "string", "format": "date"},
        "id": {"type": "string", "format": "uuid"},
        "address": {
            "type": "object",
            "properties": {
                "street": {"type": "string"},
                "zip code": {"type": "string", "pattern": "^[0-9]{5}$"},
                "geo": {
                    "type": "object",
                    "properties": {
                        "lat": {"type": "number", "minimum": -90, "maximum": 90},
                        "lon": {"type": "number", "minimum": -180, "maximum": 180},
                    },
                    "required": ["lat", "lon"],
                    "additionalProperties": False,
                },
            },
            "required": ["street"],
            "additionalProperties": False,
        },
        "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True, "maxItems": 3},
        "nickname": {"type": ["string", "null"]},
        "anything": {},
    },
    "required": ["name", "address"],
    "additionalProperties": False,
}

_EVENS = {
    "$schema": _DRAFT,
    "type": "array",
    "items": {"type": "integer"},
    "contains": {"type": "integer", "multipleOf": 2, "minimum": 10, "maximum": 50},
    "minContains": 2,
    "maxContains": 4,
    "minItems": 2,
    "maxItems": 7,
}

_NUMBERS = {
    "type": "object",
    "properties": {
        "count": {"type": "integer", "minimum": 0, "maximum": 1000, "multipleOf": 5},
        "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
        "price": {"type": "number", "minimum": 0.01, "multipleOf": 0.01},
        "level": {"type": "integer", "exclusiveMinimum": 1.5, "exclusiveMaximum": 9.5},
        "temperature": {"type": "number", "minimum": -273.15},
        "flag": {"type": "boolean"},
        "nothing": {"type": "null"},
        "ip": {"type": "string", "format": "ipv4"},
        "site": {"type": "string", "format": "uri"},
        "at": {"type": "string", "format": "date-time"},
    },
    "required": ["count", "ratio"],
}

_CHOICES = {
    "type": "object",
    "properties": {
        "status": {"enum": ["active", "inactive", "yes", "null"]},
        "level": {"type": "integer", "enum": [1, 2, 3]},
        "answer": {"enum": [True, 0, "0", None, [1, 2], {"k": "v"}]},
        "version": {"const": "1.0"},
        "mode": {"type": "string", "const": "fast"},
        "flag": {"const": False},
        "pi": {"const": 3.14159},
    },
    "required": ["status", "version"],
    "additionalProperties": False,
}

_MAP = {
    "type": "object",
    "properties": {
        "credit_card": {"type": "string", "pattern": "^[0-9]{16}$"},
        "billing_address": {"type": "string"},
        "$ref": {"type": "string"},
        "class": {"type": "integer"},
    },
    "patternProperties": {
        "^x-[a-z]+$": {"type": "string", "maxLength": 10},
        "^[0-9]+$": {"type": "integer"},
    },
    "additionalProperties": {"type": "boolean"},
    "dependentRequired": {"credit_card": ["billing_address"]},
    "minProperties": 1,
    "maxProperties": 4,
}

_TUPLE = {
    "type": "array",
    "prefixItems": [
        {"type": "string", "enum": ["point", "line"]},
        {"type": "number"},
        {"type": "array", "items": {"type": "object", "properties": {"on": {"type": "boolean"}}}},
    ],
    "items": False,
    "minItems": 2,
}

GOLDEN: dict[str, GoldenCase] = {
    case.name: case
    for case in (
        GoldenCase(
            "object_nested",
            _PERSON,
            valid=(
                {"name": "Ada", "address": {"street": "Main 1"}},
                {"name": "Ada", "email": "a@b.c", "joined": "2024-01-31", "tags": ["a", "b"],
                 "id": "2eb8aa08-aa98-11ea-b4aa-73b441d16380", "nickname": None, "anything": [1, {}],
                 "address": {"street": "x", "zip code": "12345", "geo": {"lat": 1.5, "lon": -180}}},
            ),
            invalid=(
                {"name": "ada", "address": {"street": "x"}},
                {"name": "Ada"},
                {"name": "Ada", "address": {"street": "x", "geo": {"lat": 91, "lon": 0}}},
                {"name": "Ada", "address": {"street": "x", "zip code": "1234"}},
                {"name": "Ada", "address": {"street": "x", "extra": 1}},
                {"name": "Ada", "address": {"street": "x"}, "tags": ["a", "a"]},
                {"name": "Ada", "address": {"street": "x"}, "joined": "2024-02-30"},
                {"name": "Ada", "address": {"street": "x"}, "email": "nobody"},
                {"name": "Ada", "address": {"street": "x"}, "id": "not-a-uuid"},
                {"name": "Ada", "address": {"street": "x"}, "nickname": 5},
                {"name": "Ada", "address": {"street": None}},
                {"name": "Ada", "address": {"street": "x"}, "zip": 1},
            ),
        ),
        GoldenCase(
            "array_contains",
            _EVENS,
            valid=([10, 12], [1, 10, 3, 50.0], [10, 20, 30, 40, 1, 3, 5]),
            invalid=([10], [10, 11], [10, 20, 30, 40, 50], [10, 20.5], "10,20", [10, 20, True],
                     [10, 20, 1, 1, 1, 1, 1, 1]),
            # strict int: a whole float is not an integer to Pydantic
            python_differs=([1, 10, 3, 50.0],),
        ),
        GoldenCase(
            "numeric_scalars",
            _NUMBERS,
            valid=(
                {"count": 0, "ratio": 0.5},
                {"count": 1000, "ratio": 0.999, "price": 0.5, "level": 9, "temperature": -273.15,
                 "flag": False, "nothing": None, "ip": "10.0.0.1", "site": "https://example.com/x",
                 "at": "2024-01-01T10:00:00Z"},
                {"count": 5.0, "ratio": 1e-05, "level": 2},
            ),
            invalid=(
                {"count": 3, "ratio": 0.5},
                {"count": -5, "ratio": 0.5},
                {"count": 5, "ratio": 1},
                {"count": 5, "ratio": 0},
                {"count": 5, "ratio": 0.5, "level": 1},
                {"count": 5, "ratio": 0.5, "level": 10},
                {"count": 5, "ratio": 0.5, "price": 0.001},
                # 19.99 / 0.01 is 1998.9999999999998 in floats: the reference
                # validator rejects it, so the Pydantic model must too
                {"count": 5, "ratio": 0.5, "price": 19.99},
                {"count": 5, "ratio": 0.5, "flag": 1},
                {"count": True, "ratio": 0.5},
                {"count": "5", "ratio": 0.5},
                {"count": 5.5, "ratio": 0.5},
                {"count": 5, "ratio": 0.5, "ip": "300.1.1.1"},
                {"count": 5, "ratio": 0.5, "at": "yesterday"},
                {"count": 5, "ratio": 0.5, "nothing": 0},
            ),
            python_differs=(
                {"count": 5.0, "ratio": 1e-05, "level": 2},  # strict int: 5.0 is not an integer
                {"count": 5, "ratio": 0.5, "price": 19.99},  # multiple_of on floats has a tolerance
            ),
        ),
        GoldenCase(
            "enum_const",
            _CHOICES,
            valid=(
                {"status": "yes", "version": "1.0"},
                {"status": "null", "version": "1.0", "level": 2.0, "answer": [1, 2], "mode": "fast",
                 "flag": False, "pi": 3.14159},
                {"status": "active", "version": "1.0", "answer": 0.0},
                {"status": "active", "version": "1.0", "answer": {"k": "v"}},
                {"status": "active", "version": "1.0", "answer": None},
            ),
            invalid=(
                {"status": None, "version": "1.0"},
                {"status": "active", "version": 1.0},
                {"status": "active", "version": "1.0", "level": True},
                {"status": "active", "version": "1.0", "level": 4},
                {"status": "active", "version": "1.0", "answer": False},
                {"status": "active", "version": "1.0", "answer": 1},
                {"status": "active", "version": "1.0", "answer": [1, 2, 3]},
                {"status": "active", "version": "1.0", "flag": 0},
                {"status": "active", "version": "1.0", "mode": "slow"},
                {"status": "active", "version": "1.0", "other": 1},
            ),
            # Literal and == compare true with 1 and false with 0
            python_differs=(
                {"status": "active", "version": "1.0", "level": True},
                {"status": "active", "version": "1.0", "answer": False},
                {"status": "active", "version": "1.0", "answer": 1},
                {"status": "active", "version": "1.0", "flag": 0},
            ),
        ),
        GoldenCase(
            "pattern_dependent",
            _MAP,
            valid=(
                {"x-note": "hi"},
                {"credit_card": "1234567812345678", "billing_address": "here"},
                {"123": 4, "other": True, "$ref": "r", "class": 1},
            ),
            invalid=(
                {},
                {"credit_card": "1234567812345678"},
                {"x-note": "much too long text"},
                {"123": "four"},
                {"other": "not a bool"},
                {"a": True, "b": True, "c": True, "d": True, "e": True},
                {"class": "first"},
            ),
        ),
        GoldenCase(
            "tuple_and_any",
            _TUPLE,
            valid=(["point", 1], ["line", 2.5, []], ["line", 2.5, [{"on": True}, {"x": 1}]]),
            invalid=(["point"], ["circle", 1], ["point", "1"], ["point", 1, [], 4],
                     ["point", 1, [{"on": "yes"}]], {"0": "point"}),
            # a tuple needs all three items; the schema allows two
            python_differs=(["point", 1],),
        ),
    )
}
