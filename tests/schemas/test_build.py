"""build_dataset: files written, external schemas with their exclusions."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conformbench.errors import UsageError
from conformbench.files import MAX_SCHEMA_DEPTH
from conformbench.schemas.build import BuildOptions, build_dataset
from conformbench.schemas.case import load_dataset
from conformbench.validator.schema_validator import validator_for


def test_generated_files(tmp_path: Path) -> None:
    result = build_dataset(BuildOptions(out=tmp_path, n=12, seed=5))
    assert load_dataset(tmp_path) == result.cases
    stats = json.loads((tmp_path / "stats.json").read_text())
    assert stats["n"] == 12 and stats["excluded"] == 0
    assert sum(stats["root_types"].values()) == 12
    assert json.loads((tmp_path / "excluded.json").read_text()) == []


def test_external_schemas_with_exclusions(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "good.json").write_text(json.dumps(
        {"type": "object", "properties": {"a": {"type": "integer", "minimum": 3}}, "required": ["a"]}))
    (src / "broken.json").write_text('{"type":')
    (src / "invalid.json").write_text('{"type": 5}')
    (src / "unsat.json").write_text('{"type": "string", "minLength": 5, "maxLength": 2}')
    (src / "remote.json").write_text('{"$ref": "http://example.com/x.json"}')
    (src / "list.json").write_text("[1, 2]")
    result = build_dataset(BuildOptions(out=tmp_path / "out", schemas=src))
    assert [c.id for c in result.cases] == ["good"]
    reasons = {e.id: e.reason for e in result.excluded}
    assert set(reasons) == {"broken", "invalid", "unsat", "remote", "list"}
    assert "not JSON" in reasons["broken"]
    assert "invalid schema" in reasons["invalid"]
    assert reasons["unsat"].startswith("unsatisfiable")
    assert "cannot resolve $ref" in reasons["remote"]
    assert "not a schema" in reasons["list"]
    written = json.loads((tmp_path / "out" / "excluded.json").read_text())
    assert {e["id"] for e in written} == set(reasons)
    good = result.cases[0]
    assert good.source == "good.json" and validator_for(good.schema).is_valid(good.valid_instance)  # type: ignore[arg-type]
    assert {i.keyword for i in good.invalid_instances} >= {"type", "required", "minimum"}


def test_external_n_and_formats(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(json.dumps({"type": t}) for t in ("string", "integer", "null")) + "\n")
    result = build_dataset(BuildOptions(out=tmp_path / "o", schemas=path, n=2, formats=("json", "yaml")))
    assert len(result.cases) == 2
    assert all(set(c.renderings) == {"json", "yaml"} for c in result.cases)


def test_duplicate_external_ids_are_excluded(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text('{"id": "x", "schema": {}}\n{"id": "x", "schema": {"type": "null"}}\n')
    result = build_dataset(BuildOptions(out=tmp_path / "o", schemas=path))
    assert [e.reason for e in result.excluded] == ["duplicate id"]


def test_bad_n(tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        build_dataset(BuildOptions(out=tmp_path, n=0))


def test_too_deep_schemas_are_excluded(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "deep.json").write_text('{"type": "array", "items": ' * 900 + "{}" + "}" * 900)
    (src / "deeper.json").write_text("[" * 100_000 + "]" * 100_000)
    # a fixed bound, whatever the recursion limit: a test run or a host that
    # raises it must not let a 900-level schema through to the serialiser
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(50_000)
    try:
        result = build_dataset(BuildOptions(out=tmp_path / "out", schemas=src))
    finally:
        sys.setrecursionlimit(limit)
    assert result.cases == []
    assert [e.reason for e in result.excluded] == [f"nested deeper than {MAX_SCHEMA_DEPTH} levels, "
                                                   "the most a schema may nest"] * 2


def test_a_format_that_cannot_express_a_schema_leaves_the_others(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    # XML 1.0 cannot carry U+0007, not even as a character reference
    (src / "bell.json").write_text(json.dumps({"type": "string", "description": "ring \u0007", "maxLength": 3}))
    (src / "plain.json").write_text(json.dumps({"type": "string", "maxLength": 3}))
    result = build_dataset(BuildOptions(out=tmp_path / "out", schemas=src, formats=("json", "yaml", "xml", "nl")))
    assert [c.id for c in result.cases] == ["bell", "plain"] and not result.excluded
    bell, plain = result.cases
    assert set(bell.renderings) == {"json", "yaml", "nl"} and bell.formats == ("json", "yaml", "nl")
    assert set(bell.missing_formats) == {"xml"} and "U+0007" in bell.missing_formats["xml"]
    assert bell.invalid_instances  # the oracle ran as for any kept schema
    lines = [json.loads(line) for line in (tmp_path / "out" / "dataset.jsonl").read_text().splitlines()]
    assert "missing_formats" in lines[0] and "missing_formats" not in lines[1]
    assert load_dataset(tmp_path / "out") == result.cases
    stats = json.loads((tmp_path / "out" / "stats.json").read_text())
    assert stats["missing_formats"] == {"xml": 1}
    assert plain.missing_formats == {}


def test_real_world_features_keep_the_schema(tmp_path: Path) -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "decription": "a misspelt description: an annotation, not an error",
        "x-taplo": {"links": {"key": "https://example.com"}},
        "properties": {
            "service": {"$ref": "#/definitions/service"},
            "mode": {"anyOf": [{"const": "fast"}, {"type": "integer", "minimum": 1}]},
            "tags": {"type": "array", "items": {"type": "array", "items": {"type": "string"}}},
            "extra": {"type": "object", "additionalProperties": {"type": "boolean"}},
            "never": False,
            "anything": True,
        },
        "required": ["service"],
        "allOf": [{"not": {"required": ["never"]}}],
        "if": {"required": ["mode"]}, "then": {"required": ["tags"]}, "else": {},
        "definitions": {"service": {"type": "object", "oneOf": [{"required": ["image"]}, {"required": ["build"]}],
                                    "properties": {"image": {"type": "string", "minLength": 1}}}},
    }
    path = tmp_path / "real.jsonl"
    path.write_text(json.dumps({"id": "real", "schema": schema}) + "\n")
    result = build_dataset(BuildOptions(out=tmp_path / "out", schemas=path))
    assert not result.excluded and len(result.cases) == 1
    case = result.cases[0]
    assert {"json", "yaml", "xml", "nl"} <= set(case.renderings)  # python: whatever its renderer can do
    assert set(case.renderings) | set(case.missing_formats) == {"json", "yaml", "xml", "python", "nl"}
    assert validator_for(schema).is_valid(case.valid_instance)
    assert "/properties/service/properties/image/minLength" in {i.schema_path for i in case.invalid_instances}
    note = case.renderings["nl"].splitlines()[-1]
    assert "decription" in note and "x-taplo" in note and "misspelt" not in case.renderings["nl"]


def test_the_shipped_suite_builds(tmp_path: Path) -> None:
    from conformbench.schemas.external import suite_names, suite_path

    assert "schemastore" in suite_names()
    result = build_dataset(BuildOptions(out=tmp_path, schemas=suite_path("schemastore"), n=3))
    assert len(result.cases) == 3 and not result.excluded
    assert all(c.source.endswith(".json") and c.invalid_instances for c in result.cases)


def test_the_python_renderings_inexact_keywords_are_recorded(tmp_path: Path) -> None:
    from conformbench.formats.python.format import python_inexact_keywords
    from conformbench.schemas.case import dump_case

    src = tmp_path / "src"
    src.mkdir()
    (src / "price.json").write_text(json.dumps({"type": "object", "required": ["price"],
                                                "properties": {"price": {"type": "number", "multipleOf": 0.01}}}))
    (src / "plain.json").write_text(json.dumps({"type": "string", "maxLength": 3}))
    result = build_dataset(BuildOptions(out=tmp_path / "out", schemas=src))
    cases = {c.id: c for c in result.cases}
    price, plain = cases["price"], cases["plain"]
    assert [(i.keyword, i.schema_path) for i in price.python_inexact] == [
        ("multipleOf", "/properties/price/multipleOf")]
    assert "rounding error" in price.python_inexact[0].reason
    assert [i.schema_path for i in price.python_inexact] == python_inexact_keywords(price.schema)
    assert plain.python_inexact == [] and python_inexact_keywords(plain.schema) == []
    lines = {json.loads(line)["id"]: line for line in (tmp_path / "out" / "dataset.jsonl").read_text().splitlines()}
    assert "python_inexact" in json.loads(lines["price"])
    # a schema without any is written exactly as before the field existed
    assert list(json.loads(lines["plain"])) == ["id", "schema", "renderings", "valid_instance", "invalid_instances",
                                                "unisolated", "root_type", "depth", "source"]
    assert lines["plain"] == dump_case(plain)
    assert load_dataset(tmp_path / "out") == result.cases
    stats = json.loads((tmp_path / "out" / "stats.json").read_text())
    assert stats["python_inexact"] == {"multipleOf": 1} and stats["python_inexact_schemas"] == 1
    # without the python format there is no rendering to be inexact
    again = build_dataset(BuildOptions(out=tmp_path / "json-only", schemas=src, formats=("json",)))
    assert all(not c.python_inexact for c in again.cases)
    assert "python_inexact" not in json.loads((tmp_path / "json-only" / "stats.json").read_text())
