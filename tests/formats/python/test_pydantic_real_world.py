"""Schemas as they come from the wild (issue #14): definitions and
references (recursive ones too), allOf, anyOf/oneOf, not, if/then/else,
additionalProperties as a schema, boolean subschemas, drafts before
2020-12, misspelt and vendor keywords. Each renders, runs, judges JSON
text like the validator, and reports exactly what it does not state."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from conformbench.formats.python.format import load_model, python_rendering
from conformbench.validator.schema_validator import validator_for

TREE = {
    "$schema": "http://json-schema.org/draft-07/schema#", "title": "Tree", "$ref": "#/definitions/node",
    "definitions": {"node": {
        "type": "object", "description": "A tree node.",
        "properties": {"name": {"type": "string", "decription": "misspelt", "x-order": 1},
                       "children": {"type": "array", "items": {"$ref": "#/definitions/node"}}},
        "required": ["name"],
    }},
}
PETS = {
    "$defs": {
        "Cat": {"type": "object", "properties": {"kind": {"const": "cat"}, "lives": {"type": "integer", "maximum": 9}},
                "required": ["kind"]},
        "Dog": {"type": "object", "properties": {"kind": {"const": "dog"}, "good": {"type": "boolean"}},
                "required": ["kind"]},
    },
    "type": "object", "$comment": "vendor note",
    "properties": {"pet": {"oneOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}]},
                   "owner": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                   "tags": {"type": "object", "additionalProperties": {"type": "string"}}},
    "required": ["pet"],
}
EXTENDED = {
    "allOf": [{"$ref": "#/$defs/base"},
              {"properties": {"extra": {"type": "integer", "minimum": 0}}, "required": ["extra"]}],
    "$defs": {"base": {"type": "object", "properties": {"id": {"type": "string", "minLength": 3}}, "required": ["id"]}},
}
ADDRESS = {
    "type": "object",
    "properties": {"country": {"enum": ["US", "CA"]}, "postal": {"type": "string"}},
    "if": {"properties": {"country": {"const": "US"}}},
    "then": {"properties": {"postal": {"pattern": "^[0-9]{5}$"}}},
    "else": {"properties": {"postal": {"pattern": "^[A-Z][0-9][A-Z] [0-9][A-Z][0-9]$"}}},
    "not": {"required": ["forbidden"]},
    "dependentRequired": {"postal": ["country"]},
}
MUTUAL = {
    "$defs": {"A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}}},
              "B": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}, "n": {"type": "integer"}}}},
    "$ref": "#/$defs/A",
}
LINKED = {
    "type": "object", "required": ["value"],
    "properties": {"value": {"type": "number"}, "next": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}},
}
BOOLEANS = {"type": "object", "properties": {"a": True, "b": False},
            "additionalProperties": {"type": ["integer", "null"]}}

CASES: list[tuple[str, Any, list[Any], list[Any]]] = [
    ("tree", TREE, [{"name": "r"}, {"name": "r", "children": [{"name": "c", "children": []}]}, {"name": "r", "x": 1}],
     [{}, {"name": 1}, {"name": "r", "children": [{"children": []}]}, {"name": "r", "children": {}}]),
    ("pets", PETS, [{"pet": {"kind": "cat", "lives": 9}}, {"pet": {"kind": "dog"}, "owner": None, "tags": {"a": "b"}}],
     [{"pet": {"kind": "cow"}}, {"pet": {"kind": "cat", "lives": 10}}, {"pet": {"kind": "dog"}, "tags": {"a": 1}},
      {"pet": {"kind": "dog"}, "owner": 3}, {}]),
    ("extended", EXTENDED, [{"id": "abc", "extra": 0}, {"id": "abcd", "extra": 5, "other": True}],
     [{"id": "ab", "extra": 0}, {"id": "abc"}, {"extra": 1}, {"id": "abc", "extra": -1}]),
    ("address", ADDRESS, [{}, {"country": "US", "postal": "12345"}, {"country": "CA", "postal": "K1A 0B1"}],
     [{"country": "US", "postal": "K1A 0B1"}, {"country": "CA", "postal": "12345"}, {"postal": "12345"},
      {"forbidden": 1}, {"country": "MX"}]),
    ("mutual", MUTUAL, [{}, {"b": {"a": {"b": {"n": 1}}}}], [{"b": {"a": {"b": {"n": "1"}}}}, {"b": 1}]),
    ("linked", LINKED, [{"value": 1}, {"value": 1, "next": {"value": 2.5, "next": None}}],
     [{"value": 1, "next": {"next": None}}, {"value": 1, "next": {"value": "2"}}]),
    ("booleans", BOOLEANS, [{}, {"a": [1]}, {"c": 1, "d": None}], [{"b": 1}, {"c": "x"}, {"c": 1.5}]),
]


def _accepts(model: type[BaseModel], value: Any) -> bool:
    try:
        model.model_validate_json(json.dumps(value))
    except ValidationError:
        return False
    return True


@pytest.mark.parametrize(("name", "schema", "valid", "invalid"), CASES, ids=[c[0] for c in CASES])
def test_real_world_schema_renders_runs_and_agrees(
    name: str, schema: Any, valid: list[Any], invalid: list[Any],
) -> None:
    rendering = python_rendering(schema)
    assert rendering.inexact == (), rendering.inexact
    model = load_model(rendering.text)
    validator = validator_for(schema)
    for value in valid:
        assert validator.is_valid(value) and _accepts(model, value), (value, rendering.text)
    for value in invalid:
        assert not validator.is_valid(value) and not _accepts(model, value), (value, rendering.text)


def test_definitions_become_named_classes() -> None:
    tree = python_rendering(TREE).text
    assert "class Node(BaseModel):" in tree and '"""A tree node."""' in tree
    assert 'children: "list[Node]" = None' in tree and "class Tree(Node):" in tree  # named from its title (#29)
    assert "decription" not in tree and "x-order" not in tree
    pets = python_rendering(PETS).text
    assert "class Cat(BaseModel):" in pets and "pet: Cat | Dog" in pets and "owner: str | None = None" in pets
    assert "tags: dict[str, str] = None" in pets


def test_cycles_use_forward_references_and_rebuilds() -> None:
    mutual = python_rendering(MUTUAL).text
    assert 'a: "A" = None' in mutual and mutual.rstrip().endswith("B.model_rebuild()")
    linked = python_rendering(LINKED).text
    assert 'next: "Schema | None" = None' in linked


def test_all_of_is_merged_into_one_model() -> None:
    text = python_rendering(EXTENDED).text
    assert text.count("class ") == 1
    assert "id: str = Field(min_length=3)" in text and "extra: int = Field(ge=0)" in text


def test_conditions_are_one_specific_validator() -> None:
    text = python_rendering(ADDRESS).text
    assert text.count("@model_validator") == 1
    assert '"postal" in self.model_fields_set and "country" not in self.model_fields_set' in text
    assert 'if "forbidden" in data:' in text


def test_draft_07_ref_hides_its_siblings() -> None:
    """Before 2019-09 a $ref overrides the keywords beside it."""
    schema = {"$schema": "http://json-schema.org/draft-07/schema#",
              "definitions": {"s": {"type": "string"}},
              "properties": {"a": {"$ref": "#/definitions/s", "maxLength": 2}}}
    model = load_model(python_rendering(schema).text)
    assert validator_for(schema).is_valid({"a": "long"}) and _accepts(model, {"a": "long"})


def test_keywords_of_other_drafts_are_ignored_as_the_validator_does() -> None:
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
              "dependencies": {"a": ["b"]}, "properties": {"a": {}}}
    rendering = python_rendering(schema)
    assert "model_validator" not in rendering.text and rendering.inexact == ()
    assert _accepts(load_model(rendering.text), {"a": 1})


def test_overlapping_one_of_is_checked_or_reported() -> None:
    checked = {"oneOf": [{"type": "integer", "minimum": 2}, {"type": "integer", "maximum": 5}]}
    rendering = python_rendering(checked)
    assert rendering.inexact == ()
    _agree_on(checked, [1, 7], [3])
    overlapping_models = {"oneOf": [{"type": "object", "properties": {"a": {"type": "integer"}}},
                                    {"type": "object", "properties": {"b": {"type": "integer"}}}]}
    assert [i.schema_path for i in python_rendering(overlapping_models).inexact] == ["/oneOf"]


def _agree_on(schema: Any, valid: list[Any], invalid: list[Any]) -> None:
    model = load_model(python_rendering(schema).text)
    validator = validator_for(schema)
    for value in valid:
        assert validator.is_valid(value) and _accepts(model, value), value
    for value in invalid:
        assert not validator.is_valid(value) and not _accepts(model, value), value
