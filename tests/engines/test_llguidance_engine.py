from __future__ import annotations

import json

import pytest

from conformbench.errors import UnsupportedSchemaError

pytestmark = pytest.mark.slow


def test_llguidance_constrains_to_a_valid_object(constrained, person_schema, assert_schema_valid):
    result = constrained(person_schema, "llguidance")
    assert_schema_valid(result, person_schema)
    grammar = json.loads(result.engine_input or "")
    # the schema goes in unchanged, key order included
    assert grammar["grammars"][0]["json_schema"] == person_schema
    assert list(grammar["grammars"][0]["json_schema"]["properties"]) == ["name", "age"]


def test_llguidance_refuses_unimplemented_keywords(constrained):
    schema = {"type": "array", "items": {"type": "integer"}, "uniqueItems": True}
    with pytest.raises(UnsupportedSchemaError, match="uniqueItems"):
        constrained(schema, "llguidance")


def test_llguidance_enforces_maximum(constrained, assert_schema_valid):
    schema = {
        "type": "object",
        "properties": {"alpha": {"type": "integer", "minimum": 1000, "maximum": 1005}},
        "required": ["alpha"],
        "additionalProperties": False,
    }
    value = assert_schema_valid(constrained(schema, "llguidance"), schema)
    assert 1000 <= value["alpha"] <= 1005
