"""The generator: deterministic builds, metaschema-valid schemas whose oracle
instances are right, and the keyword coverage of the default 602."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformbench.schemas.build import BuildOptions, BuildResult, build_dataset
from conformbench.schemas.config import KEYWORDS, GeneratorConfig
from conformbench.schemas.generator import generate
from conformbench.schemas.walk import keywords_of
from conformbench.validator.schema_validator import check_schema, validator_for

FILES = ("dataset.jsonl", "stats.json", "excluded.json")


def _bytes(directory: Path) -> dict[str, bytes]:
    return {name: (directory / name).read_bytes() for name in FILES}


@pytest.mark.long
def test_small_builds_are_byte_identical(tmp_path: Path) -> None:
    first = build_dataset(BuildOptions(out=tmp_path / "a", n=40, seed=11))
    build_dataset(BuildOptions(out=tmp_path / "b", n=40, seed=11))
    assert _bytes(tmp_path / "a") == _bytes(tmp_path / "b")
    other = build_dataset(BuildOptions(out=tmp_path / "c", n=40, seed=12))
    assert [c.schema for c in other.cases] != [c.schema for c in first.cases]


@pytest.mark.long
def test_full_build_is_byte_identical_across_processes(full_build: BuildResult, tmp_path: Path) -> None:
    """A second default build in a fresh interpreter with another hash seed
    (set iteration order differs there) writes the same bytes."""
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    done = subprocess.run(
        [sys.executable, "-m", "conformbench.cli.main", "dataset", "build", "--out", str(tmp_path)],
        env=env, capture_output=True, text=True, check=False, timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert _bytes(tmp_path) == _bytes(full_build.out)


@pytest.mark.long
def test_full_build_has_602_cases_and_no_exclusions(full_build: BuildResult) -> None:
    assert len(full_build.cases) == 602
    assert full_build.excluded == []
    assert len({c.id for c in full_build.cases}) == 602
    for case in full_build.cases:
        assert set(case.renderings) == {"json", "yaml", "xml", "python", "nl"}
        assert all(text.strip() for text in case.renderings.values())


def test_every_schema_is_valid_and_its_instances_are_right(full_build: BuildResult) -> None:
    for case in full_build.cases:
        check_schema(case.schema)  # type: ignore[arg-type]
        validator = validator_for(case.schema)  # type: ignore[arg-type]
        assert validator.violations(case.valid_instance) == [], case.id
        assert case.unisolated == [], case.id
        for bad in case.invalid_instances:
            found = validator.violations(bad.instance)
            assert found, (case.id, bad.keyword)
            assert {(v.keyword, v.schema_path) for v in found} == {(bad.keyword, bad.schema_path)}


def test_keyword_coverage_of_the_default_dataset(full_build: BuildResult) -> None:
    used: dict[str, int] = {}
    for case in full_build.cases:
        for keyword in keywords_of(case.schema):
            used[keyword] = used.get(keyword, 0) + 1
    for keyword in (*KEYWORDS, "type", "enum", "const"):
        assert used.get(keyword, 0) >= 5, f"{keyword} in only {used.get(keyword, 0)} schemas"
    formats = {kw for c in full_build.cases for kw in _formats(c.schema)}
    assert formats == {"date", "date-time", "email", "idn-email", "uri", "uuid", "ipv4"}
    assert any(c.schema == {} for c in full_build.cases), "the empty schema {} is missing"
    assert {c.root_type for c in full_build.cases} >= {
        "object", "array", "string", "number", "integer", "boolean", "null", "enum", "const", "any"
    }
    assert max(c.depth for c in full_build.cases) >= 4
    bools = [c for c in full_build.cases if _has_boolean_additional(c.schema)]
    assert bools, "additionalProperties: true/false never drawn"


def _formats(schema: object) -> set[str]:
    if isinstance(schema, dict):
        found = {schema["format"]} if isinstance(schema.get("format"), str) else set()
        for value in schema.values():
            found |= _formats(value)
        return found
    if isinstance(schema, list):
        return set().union(*(_formats(v) for v in schema)) if schema else set()
    return set()


def _has_boolean_additional(schema: object) -> bool:
    if isinstance(schema, dict):
        if isinstance(schema.get("additionalProperties"), bool):
            return True
        return any(_has_boolean_additional(v) for v in schema.values())
    return isinstance(schema, list) and any(_has_boolean_additional(v) for v in schema)


def test_every_invalid_keyword_kind_is_represented(full_build: BuildResult) -> None:
    kinds = {i.keyword for c in full_build.cases for i in c.invalid_instances}
    expected = set(KEYWORDS) - {"properties", "patternProperties", "prefixItems"} | {"type", "enum", "const"}
    assert expected <= kinds, expected - kinds


def test_config_steers_the_mix() -> None:
    only_strings = GeneratorConfig(
        root_kinds={"string": 1.0}, keywords={"pattern": 1.0, "format": 0.0, "minLength": 0.0, "maxLength": 0.0}
    )
    schemas = [g.schema for g in generate(20, 3, only_strings)]
    assert all(s["type"] == "string" and "pattern" in s for s in schemas)


def test_schema_uri_option_adds_draft() -> None:
    made = next(iter(generate(1, 0, GeneratorConfig(schema_uri=True))))
    assert made.schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_redraws_are_rare(seed: int) -> None:
    made = list(generate(60, seed, GeneratorConfig()))
    assert sum(g.redraws for g in made) < 30
