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


def test_index_builds_past_the_time_limit_are_stopped_and_refused(llama_backend, person_schema, monkeypatch):
    from conformbench.engines import outlines_engine
    from conformbench.engines.base import engines

    engine = engines.get("outlines")()
    monkeypatch.setattr(outlines_engine, "INDEX_TIMEOUT_S", 1e-4)
    with pytest.raises(UnsupportedSchemaError, match="ran past 0 s and was stopped"):
        engine.compile(person_schema, llama_backend.vocabulary)
    monkeypatch.undo()
    # a fresh worker takes over
    assert engine.compile(person_schema, llama_backend.vocabulary).engine_input.startswith("\\{")
