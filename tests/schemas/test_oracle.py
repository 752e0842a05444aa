"""The instance oracle: valid instances (checked), single-keyword invalid
instances, proofs of unsatisfiability, and coverage of the official
JSON-Schema-Test-Suite."""

from __future__ import annotations

import json
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from conformbench.errors import SchemaError
from conformbench.schemas.oracle import find_invalid, find_valid, require_satisfiable
from conformbench.validator.schema_validator import Remotes, validator_for

PAPER_ARRAY = {
    "type": "array",
    "contains": {"type": "number", "multipleOf": 2, "exclusiveMinimum": 0, "exclusiveMaximum": 65535},
    "minContains": 1,
    "maxContains": 7,
}
PAPER_OBJECT = {
    "type": "object",
    "properties": {
        "tamil": {"type": "boolean"},
        "baser": {"type": "null"},
        "anisic": {"type": "number", "multipleOf": 17.02},
        "stingo": {"type": "string", "maxLength": 20},
        "pigheadedness": {"type": "number", "exclusiveMinimum": 27.65410407394338, "maximum": 93.85523810367313},
    },
    "additionalProperties": False,
}


def _exactly(schema: Any, keyword: str, path: str, instance: Any) -> bool:
    found = validator_for(schema).violations(instance)
    return bool(found) and {(v.keyword, v.schema_path) for v in found} == {(keyword, path)}


@pytest.mark.parametrize("schema", [PAPER_ARRAY, PAPER_OBJECT])
def test_paper_schemas(schema: dict[str, Any]) -> None:
    result = find_valid(schema)
    assert result.found and validator_for(schema).is_valid(result.instance)
    invalid = find_invalid(schema, result.instance)
    assert invalid.unisolated == []
    keywords = {i.keyword for i in invalid.instances}
    assert {"type", "contains", "maxContains"} <= keywords or {"additionalProperties", "multipleOf"} <= keywords
    for bad in invalid.instances:
        assert _exactly(schema, bad.keyword, bad.schema_path, bad.instance)


@pytest.mark.parametrize(
    ("schema", "keyword", "path"),
    [
        ({"type": "array", "contains": {"type": "integer"}, "minContains": 2}, "minContains", "/minContains"),
        ({"type": "array", "items": {"type": "integer"}, "uniqueItems": True, "minItems": 2}, "uniqueItems", "/uniqueItems"),
        ({"type": "object", "properties": {"a": {}, "b": {}}, "dependentRequired": {"a": ["b"]}},
         "dependentRequired", "/dependentRequired"),
        ({"type": "object", "properties": {"a": {}, "b": {}}, "required": ["a"], "minProperties": 2},
         "required", "/required"),
        ({"type": "array", "prefixItems": [{"type": "string"}], "items": False}, "items", "/items"),
        ({"type": "object", "patternProperties": {"^x_": {"type": "integer", "maximum": 3}}},
         "maximum", "/patternProperties/^x_/maximum"),
        ({"type": "integer", "minimum": 10, "multipleOf": 5}, "minimum", "/minimum"),
        ({"type": "string", "pattern": "^[a-z]+$", "minLength": 3}, "pattern", "/pattern"),
        ({"type": "string", "format": "uuid"}, "format", "/format"),
        ({"enum": ["a", 1, None]}, "enum", "/enum"),
    ],
)
def test_single_keyword_violations(schema: dict[str, Any], keyword: str, path: str) -> None:
    valid = find_valid(schema)
    assert valid.found
    made = {(i.keyword, i.schema_path): i.instance for i in find_invalid(schema, valid.instance).instances}
    assert (keyword, path) in made
    assert _exactly(schema, keyword, path, made[(keyword, path)])


def test_refs_within_the_document() -> None:
    schema = {
        "$defs": {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}},
                           "required": ["value"], "additionalProperties": {"type": "integer"}}},
        "$ref": "#/$defs/node",
    }
    result = find_valid(schema)
    assert result.found and validator_for(schema).is_valid(result.instance)


@pytest.mark.parametrize(
    ("schema", "why"),
    [
        (False, "false"),
        ({"type": "integer", "minimum": 5, "maximum": 2}, "range"),
        ({"type": "string", "minLength": 4, "maxLength": 1}, "minLength"),
        ({"allOf": [{"type": "string"}, {"type": "number"}]}, "type"),
        ({"enum": [1, 2], "type": "string"}, "enum"),
        ({"type": "object", "required": ["a"], "properties": {"a": False}}, "forbidden"),
    ],
)
def test_unsatisfiable_is_proved(schema: Any, why: str) -> None:
    result = find_valid(schema)
    assert result.status == "unsatisfiable"
    assert why in result.reason
    with pytest.raises(SchemaError, match="unsatisfiable"):
        require_satisfiable(schema)


def test_invalid_schema_is_reported() -> None:
    assert find_valid({"type": 7}).status == "invalid"
    with pytest.raises(SchemaError):
        require_satisfiable({"minLength": -1})


def test_results_are_deterministic() -> None:
    assert find_valid(PAPER_OBJECT) == find_valid(json.loads(json.dumps(PAPER_OBJECT)))


def _suite_groups(suite: Path) -> list[tuple[str, dict[str, Any]]]:
    groups = []
    for path in sorted((suite / "tests" / "draft2020-12").glob("*.json")):
        groups += [(f"{path.stem}: {g['description']}", g) for g in json.loads(path.read_text())]
    return groups


@pytest.mark.long
def test_suite_coverage(suite_dir: Path) -> None:
    """A valid instance for >= 95% of the suite's satisfiable schemas (those
    with a test marked valid); every instance found is valid, and every
    schema the oracle calls unsatisfiable has no valid test."""
    remotes = Remotes.from_directory(suite_dir / "remotes", "http://localhost:1234")
    satisfiable = found = found_offline = 0
    misses: Counter[str] = Counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # custom metaschemas: jsonschema's deprecation notice
        for name, group in _suite_groups(suite_dir):
            result = find_valid(group["schema"], remotes)
            offline = find_valid(group["schema"])
            has_valid = any(t["valid"] for t in group["tests"])
            if result.found:
                assert validator_for(group["schema"], remotes).is_valid(result.instance), name
            if result.status == "unsatisfiable":
                assert not has_valid, name
            if has_valid:
                satisfiable += 1
                found += result.found
                found_offline += offline.found
                if not result.found:
                    misses[f"{result.status}: {result.reason[:80]}"] += 1
    rate, offline_rate = found / satisfiable, found_offline / satisfiable
    print(f"\nsuite oracle coverage: {found}/{satisfiable} = {rate:.1%} "
          f"(references within the document only: {found_offline}/{satisfiable} = {offline_rate:.1%})")
    for reason, count in misses.most_common():
        print(f"  not found ({count}): {reason}")
    assert satisfiable >= 350
    assert rate >= 0.95
    assert offline_rate >= 0.90


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "minLength": 10**9},
        {"type": "array", "minItems": 10**9},
        {"type": "object", "minProperties": 10**8},
    ],
)
def test_hostile_sizes_are_given_up_on_not_built(schema: dict[str, Any]) -> None:
    result = find_valid(schema)
    assert result.status == "unknown" and result.reason


def test_an_over_large_pattern_is_a_refused_schema() -> None:
    # counted repetitions past the shared bound (validator/pattern_size.py) are
    # refused before any compile: the schema is invalid, with the reason
    result = find_valid({"type": "string", "pattern": "^a{1000000000}$"})
    assert result.status == "invalid" and "unrolls to more than" in (result.reason or "")


def test_hostile_size_in_a_keyword_to_violate() -> None:
    schema = {"type": "array", "maxItems": 10**9}
    invalid = find_invalid(schema, [])
    assert [u.keyword for u in invalid.unisolated] == ["maxItems"]
    assert {i.keyword for i in invalid.instances} == {"type"}


# -- real-world schema features ---------------------------------------------


def test_an_unsatisfiable_place_for_a_new_property_is_no_crash() -> None:
    # a pattern property whose schema requires a forbidden name: the valid
    # instance has none, and an edit that adds one finds no value (this Unsat
    # used to escape find_invalid and stop `dataset build`)
    schema = {"type": "object", "patternProperties": {"^[0-9]+$": {
        "type": "object", "properties": {"score": {"type": "integer"}},
        "additionalProperties": False, "required": ["score", "rating"]}}}
    valid = find_valid(schema)
    assert valid.found
    result = find_invalid(schema, valid.instance)
    assert ("type", "/type") in {(i.keyword, i.schema_path) for i in result.instances}
    assert {u.schema_path for u in result.unisolated} >= {"/patternProperties/^[0-9]+$/required"}
    assert all(u.reason for u in result.unisolated)


def test_violations_reach_constraints_behind_references() -> None:
    schema = {
        "type": "object",
        "properties": {"name": {"$ref": "#/definitions/name"}, "alias": {"$ref": "#/definitions/name"}},
        "required": ["name"],
        "definitions": {"name": {"type": "string", "minLength": 2, "pattern": "^[a-z]+$"}},
    }
    valid = find_valid(schema)
    result = find_invalid(schema, valid.instance)
    found = {(i.keyword, i.schema_path) for i in result.instances}
    # the validator reads a $ref's target in place; each target is walked once
    assert {("type", "/properties/name/type"), ("minLength", "/properties/name/minLength"),
            ("pattern", "/properties/name/pattern")} <= found
    assert not any(path.startswith("/properties/alias/") for _, path in found)
    for inv in result.instances:
        assert _exactly(schema, inv.keyword, inv.schema_path, inv.instance)


def test_draft7_tuple_items_and_additional_items() -> None:
    schema = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "array", "minItems": 2,
              "items": [{"type": "string"}, {"type": "integer", "minimum": 5}], "additionalItems": {"type": "null"}}
    valid = find_valid(schema)
    assert valid.found
    result = find_invalid(schema, valid.instance)
    found = {(i.keyword, i.schema_path) for i in result.instances}
    assert {("type", "/items/0/type"), ("minimum", "/items/1/minimum"), ("type", "/additionalItems/type")} <= found
    for inv in result.instances:
        assert _exactly(schema, inv.keyword, inv.schema_path, inv.instance)


def test_a_draft4_id_in_a_subschema_does_not_move_reference_resolution() -> None:
    # "$id" is no keyword in draft 4 (it says "id"): SchemaStore's cryproj
    # schemas carry "$id": "/definitions/cvars" there, and their "#/..."
    # references must still resolve against the document
    schema = {"$schema": "http://json-schema.org/draft-04/schema#", "id": "https://example.com/s",
              "definitions": {"v": {"$id": "/definitions/v", "enum": ["a", "b"]}},
              "properties": {"x": {"$id": "/properties/x", "$ref": "#/definitions/v"}}}
    valid = find_valid(schema)
    assert valid.found, valid.reason
    assert validator_for(schema).violations({"x": "c"})[0].keyword == "enum"


def test_the_per_schema_budget_lists_what_it_did_not_reach(monkeypatch: pytest.MonkeyPatch) -> None:
    from conformbench.schemas import mutate

    schema = {"type": "object", "properties": {f"p{i}": {"type": "integer", "minimum": i} for i in range(8)}}
    valid = find_valid(schema)
    full = find_invalid(schema, valid.instance)
    assert len(full.instances) == 17 and not full.unisolated
    monkeypatch.setattr(mutate, "_SCHEMA_CHECKS", 12)
    cut = find_invalid(schema, valid.instance)
    assert cut.unisolated and len(cut.instances) + len(cut.unisolated) == 17
    # the constraint under way when the budget ran out says so; the rest were not tried
    assert all("budget" in u.reason for u in cut.unisolated)
    assert "budget for this schema (12 validations) is spent" in cut.unisolated[-1].reason
