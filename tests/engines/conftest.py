"""Helpers for engine tests: one small object schema and a way to generate
under a constraint with the session's real llama.cpp backend."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from conformbench.backends.base import Backend
from conformbench.records.generation import (
    Constraint,
    DecodingSettings,
    GenerationRequest,
    GenerationResult,
)
from conformbench.records.prompt import Message, Prompt

#: "name" before "age" (not alphabetical): engines must keep the schema's
#: property order
PERSON_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 12}, "age": {"type": "integer"}},
    "required": ["name", "age"],
    "additionalProperties": False,
}

Generate = Callable[[dict[str, Any], str], GenerationResult]


@pytest.fixture
def person_schema() -> dict[str, Any]:
    return json.loads(json.dumps(PERSON_SCHEMA))


@pytest.fixture
def constrained(llama_backend: Backend) -> Generate:
    """generate(schema, engine) on a short prompt, max 64 tokens."""

    def generate(schema: dict[str, Any], engine: str) -> GenerationResult:
        request = GenerationRequest(
            prompt=Prompt((Message("user", "Describe a person called Bob as JSON."),)),
            settings=DecodingSettings(max_tokens=64),
            constraint=Constraint(schema, engine),
        )
        return llama_backend.generate(request)

    return generate


@pytest.fixture
def assert_schema_valid() -> Callable[[GenerationResult, dict[str, Any]], Any]:
    """Check a constrained result: it stopped, parses, validates against the
    full schema, and its keys follow the schema's property order."""
    from conformbench.validator.schema_validator import validator_for

    def check(result: GenerationResult, schema: dict[str, Any]) -> Any:
        assert result.finish_reason == "stop", result
        value = json.loads(result.text)
        assert validator_for(schema).violations(value) == []
        assert list(value) == [k for k in schema["properties"] if k in value]
        return value

    return check
