from __future__ import annotations

import pytest

from conformbench.errors import UnsupportedSchemaError

pytestmark = pytest.mark.slow


def test_gbnf_constrains_to_a_valid_object(constrained, person_schema, assert_schema_valid):
    result = constrained(person_schema, "gbnf")
    assert_schema_valid(result, person_schema)
    assert "root ::=" in (result.engine_input or "")
    assert result.completion_tokens <= 64


def test_gbnf_refuses_a_pattern_without_anchors(constrained):
    schema = {"type": "string", "pattern": "ab+c"}
    with pytest.raises(UnsupportedSchemaError, match=r"^gbnf cannot compile the schema: .*\^"):
        constrained(schema, "gbnf")


def test_gbnf_refuses_not(constrained):
    with pytest.raises(UnsupportedSchemaError) as info:
        constrained({"not": {"type": "string"}}, "gbnf")
    assert info.value.engine == "gbnf"
    assert "\n" not in str(info.value)
