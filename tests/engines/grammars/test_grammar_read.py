"""What the grammars state and what they list as left to the validator."""

from __future__ import annotations

import pytest

from conformbench.engines.grammars.read import read_shape, unenforced_keywords
from conformbench.errors import UnsupportedSchemaError


def test_stated_keywords_are_not_listed():
    schema = {
        "type": "object",
        "properties": {
            "s": {"type": "string", "minLength": 1, "maxLength": 5, "pattern": "^[a-z]+$"},
            "d": {"type": "string", "format": "date"},
            "n": {"type": "number", "minimum": 0, "exclusiveMaximum": 9, "multipleOf": 0.5},
            "i": {"type": "integer", "multipleOf": 25},
            "e": {"enum": ["a", 1, None]},
            "c": {"const": {"x": [1, 2]}},
            "l": {"type": "array", "prefixItems": [{"type": "string"}], "items": {"type": "integer"},
                  "minItems": 1, "maxItems": 4},
        },
        "required": ["s"],
        "additionalProperties": False,
        "patternProperties": {"^x_": {"type": "integer"}},
        "minProperties": 1,
        "maxProperties": 5,
        "dependentRequired": {"d": ["n"]},
        "title": "annotations constrain nothing",
    }
    assert unenforced_keywords(schema) == []


@pytest.mark.parametrize(("schema", "listed"), [
    ({"type": "array", "uniqueItems": True}, ["uniqueItems"]),
    ({"type": "array", "uniqueItems": False}, []),
    ({"type": "array", "contains": {"type": "integer"}, "minContains": 2}, ["contains", "minContains"]),
    ({"type": "array", "minContains": 2}, []),  # without contains it constrains nothing
    ({"type": "integer", "multipleOf": 7}, ["multipleOf"]),
    ({"type": "number", "multipleOf": 0.1}, ["multipleOf"]),  # 0.3 / 0.1 is not a whole number in floats
    ({"type": "string", "pattern": "(?=a)b"}, ["pattern"]),  # look-ahead
    ({"type": "string", "pattern": "^a|b$"}, ["pattern"]),  # anchors inside
    ({"type": "string", "format": "ipv6"}, ["format"]),
    ({"type": "string", "format": "not-a-format"}, []),  # the validator ignores it too
    ({"anyOf": [{"type": "string"}, {"type": "integer"}]}, ["anyOf"]),
    ({"$defs": {"a": {"type": "string"}}, "$ref": "#/$defs/a"}, ["$ref"]),
    ({"type": "integer", "minLength": 3}, []),  # does not apply to integers
    ({"type": "object", "properties": {"a": {"type": "integer"}}, "dependentRequired": {"a": ["b"]}},
     ["dependentRequired"]),
])
def test_unstated_keywords_are_listed(schema, listed):
    assert unenforced_keywords(schema) == listed


def test_listed_with_their_paths():
    schema = {"type": "object", "properties": {"a/b": {"type": "array", "items": {"type": "integer", "multipleOf": 3}}}}
    (entry,) = read_shape(schema).unenforced
    assert entry.schema_path == "/properties/a~1b/items/multipleOf"
    assert entry.reason


def test_enum_values_are_checked_against_their_siblings():
    shape = read_shape({"type": "string", "enum": ["a", 1, "bb"], "maxLength": 1}).shape
    assert shape.choices == ("a",)


@pytest.mark.parametrize("schema", [
    False,
    {"enum": [1], "type": "string"},
    {"type": "object", "properties": {"a": False}, "required": ["a"]},
    {"type": "object", "required": ["a"], "additionalProperties": False},
])
def test_schemas_that_admit_nothing_are_refused(schema):
    with pytest.raises(UnsupportedSchemaError):
        read_shape(schema)
