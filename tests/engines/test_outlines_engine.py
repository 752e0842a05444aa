from __future__ import annotations

import pytest

from conformbench.errors import UnsupportedSchemaError

pytestmark = pytest.mark.slow


def test_outlines_constrains_to_a_valid_object(constrained, person_schema, assert_schema_valid):
    result = constrained(person_schema, "outlines")
    assert_schema_valid(result, person_schema)
    regex = result.engine_input or ""
    assert regex.index('"name"') < regex.index('"age"')


def test_outlines_refuses_conditionals(constrained):
    schema = {"if": {"type": "string"}, "then": {"minLength": 3}}
    with pytest.raises(UnsupportedSchemaError, match="^outlines cannot compile the schema: "):
        constrained(schema, "outlines")
