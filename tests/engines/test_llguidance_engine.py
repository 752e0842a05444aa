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
    sent = dict(grammar["grammars"][0]["json_schema"])
    assert sent.pop("x-guidance") == {"lenient": True}  # compiled leniently (docs/runtime.md)
    assert sent == person_schema
    assert list(sent["properties"]) == ["name", "age"]


def test_llguidance_leaves_unimplemented_keywords_to_the_validator_and_says_so(constrained):
    schema = {"type": "array", "items": {"type": "integer"}, "uniqueItems": True}
    result = constrained(schema, "llguidance")
    assert any("uniqueItems" in note for note in result.unenforced), result.unenforced


def test_llguidance_refuses_what_it_cannot_compile_even_leniently(constrained):
    with pytest.raises(UnsupportedSchemaError):
        constrained({"type": "string", "pattern": "(?<=a)b"}, "llguidance")


def test_llguidance_enforces_maximum(constrained, assert_schema_valid):
    schema = {
        "type": "object",
        "properties": {"alpha": {"type": "integer", "minimum": 1000, "maximum": 1005}},
        "required": ["alpha"],
        "additionalProperties": False,
    }
    value = assert_schema_valid(constrained(schema, "llguidance"), schema)
    assert 1000 <= value["alpha"] <= 1005
