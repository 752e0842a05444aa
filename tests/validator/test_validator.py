"""The ground-truth validator: offline references, given remote documents,
minContains/maxContains paths, and the jsonschema-rs metaschema fast path."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from conformbench.errors import SchemaError
from conformbench.files import JSON_SCHEMA_TEST_SUITE, shipped_data
from conformbench.validator.format_checks import schema_format_checker
from conformbench.validator.schema_validator import (
    Remotes,
    SchemaValidator,
    _fast_valid,
    validator_for,
)


def _suite() -> Path:
    return shipped_data(JSON_SCHEMA_TEST_SUITE)


def test_contains_counts_point_at_their_keyword() -> None:
    v = validator_for({"type": "array", "contains": {"type": "integer"}, "minContains": 2, "maxContains": 3})
    assert [(x.keyword, x.schema_path) for x in v.violations([1, "a"])] == [("minContains", "/minContains")]
    assert [(x.keyword, x.schema_path) for x in v.violations([1, 2, 3, 4])] == [("maxContains", "/maxContains")]
    assert [(x.keyword, x.schema_path) for x in v.violations(["a"])] == [("contains", "/contains")]


def test_root_type_is_flagged() -> None:
    found = validator_for({"type": "object"}).violations([1])
    assert found[0].root_type and found[0].keyword == "type"


@pytest.mark.parametrize("ref", ["http://localhost:1234/x.json", "#/$defs/missing", "other.json"])
def test_unresolvable_refs_are_schema_errors(ref: str) -> None:
    with pytest.raises(SchemaError, match="cannot resolve"):
        SchemaValidator({"properties": {"a": {"$ref": ref}}})


def test_given_remote_documents_resolve() -> None:
    remotes = Remotes.from_directory(_suite() / "remotes", "http://localhost:1234")
    schema = {"$ref": "http://localhost:1234/draft2020-12/integer.json"}
    v = validator_for(schema, remotes)
    assert v.is_valid(3) and not v.is_valid("x")
    with pytest.raises(SchemaError):
        validator_for(schema)


def _suite_schemas() -> list[Any]:
    out = []
    for path in sorted((_suite() / "tests" / "draft2020-12").rglob("*.json")):
        out += [g["schema"] for g in json.loads(path.read_text())]
    return out


def test_fast_metaschema_path_agrees_with_python_jsonschema() -> None:
    """Wherever the jsonschema-rs path accepts a schema, python-jsonschema
    (with our ECMA-262 'regex' format check) accepts it too (it decides
    everything else)."""
    cls = jsonschema.Draft202012Validator
    checker = schema_format_checker(cls)
    schemas = _suite_schemas() + [
        {"type": 5}, {"pattern": "\\p{Letter}"}, {"minLength": -1}, {"patternProperties": {"(": {}}},
        {"properties": {"a": {"pattern": "["}}}, {"required": ["a", "a"]}, {"enum": []},
        {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "string"},
    ]
    fast = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for schema in schemas:
            if _fast_valid(schema, cls):
                fast += 1
                cls.check_schema(schema, format_checker=checker)  # raises if the two disagree
    assert fast > 200
    assert not _fast_valid({"pattern": "("}, cls)
    assert not _fast_valid({"$ref": "#"}, cls)


@pytest.mark.parametrize("schema", [
    {"type": "string", "pattern": "("},
    {"type": "string", "pattern": "\\p{NoSuchProperty}"},
    {"$schema": "http://json-schema.org/draft-04/schema#", "patternProperties": {"[": {}}},
    {"$schema": "http://json-schema.org/draft-07/schema#", "properties": {"a": {"pattern": "a)"}}},
])
def test_a_pattern_no_engine_compiles_is_a_schema_error(schema: dict[str, Any]) -> None:
    with pytest.raises(SchemaError, match="regex|pattern|invalid"):
        SchemaValidator(schema)


def test_ecma_spellings_python_rejects_are_accepted() -> None:
    """ECMA-262 with the u flag, as 2020-12 asks: Unicode properties,
    \\u escapes, named groups."""
    letters = validator_for({"type": "string", "pattern": "^\\p{Letter}+$"})
    assert letters.is_valid("héllo") and not letters.is_valid("h1")
    named = validator_for({"type": "string", "pattern": "^(?<year>\\d{4})-\\u00e9$"})
    assert named.is_valid("2024-é") and not named.is_valid("24-é")


@pytest.mark.parametrize("draft", ["draft2020-12", "draft7"])
def test_the_suites_float_overflow_case_passes(draft: str) -> None:
    """The official optional test: every integer is a multiple of 0.5, even
    where float division overflows."""
    for group in json.loads((_suite() / "tests" / draft / "optional" / "float-overflow.json").read_text()):
        validator = validator_for(group["schema"])
        for case in group["tests"]:
            assert validator.is_valid(case["data"]) is case["valid"], case["description"]


@pytest.mark.parametrize(("divisor", "instance", "valid"), [
    (0.5, 10**400, True),
    (0.01, 10**400 + 1, True),  # the decimal the schema wrote, not 0.01's binary neighbour
    (0.3, 10**400, False),  # 10**401 / 3 is no integer
    (3, 10**400, False),
    (3, 10**400 + 2, True),
    (0.01, float("inf"), False),
])
def test_multiple_of_an_integer_past_float_range_is_decided_exactly(
        divisor: float, instance: int | float, valid: bool) -> None:
    """Model output once held an integer of hundreds of digits; python-jsonschema's
    float division raised OverflowError and stopped the whole rescoring."""
    found = validator_for({"multipleOf": divisor}).violations(instance)
    assert (found == []) is valid
    if not valid:
        assert found[0].keyword == "multipleOf" and len(found[0].message) < 100


def test_multiple_of_keeps_the_references_answer_where_it_has_one() -> None:
    reference = jsonschema.Draft202012Validator({"multipleOf": 0.01})
    for instance in (0.07, 0.5, 1, 2.25, 1e20, 123456789):
        assert validator_for({"multipleOf": 0.01}).is_valid(instance) is reference.is_valid(instance)
