"""MaskBench-shaped suites in the engine check, JSONSchemaBench's per-schema
terms, and the default check's engine set. The fixture files are written
here: nothing of MaskBench is shipped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformbench.audits.engine_check import (
    SLOW_ENGINES,
    CheckConfig,
    check_steps,
    left_out,
    maskbench_source,
    read_schemas_source,
    run_engine_check,
)
from conformbench.audits.engine_check.maskbench import MASKBENCH_UNKNOWN_GROUP, is_maskbench_dir
from conformbench.audits.engine_check.records import Refusal
from conformbench.audits.engine_check.run import _slow_note
from conformbench.audits.engine_check.sources import VALID_GROUP, CheckSource
from conformbench.audits.engine_check.summary import SchemaOutcome
from conformbench.engines.base import engines

#: (file stem, schema, tests as (data, valid))
CASES = [
    ("minimum", {"type": "integer", "minimum": 5}, [(5, True), (12, True), (3, False)]),
    ("unique", {"type": "array", "items": {"type": "integer"}, "uniqueItems": True}, [([1, 2], True), ([1, 1], False)]),
    ("enum", {"enum": ["red", "green"]}, [("red", True), ("purple", False)]),
]


def write_suite(root: Path, cases=CASES, extra: dict[str, object] | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for stem, schema, tests in cases:
        doc = {"schema": schema, "meta": {"note": "written by the test"},
               "tests": [{"description": f"{stem} {i}", "data": d, "valid": v} for i, (d, v) in enumerate(tests)]}
        (root / f"{stem}.json").write_text(json.dumps(doc), encoding="utf-8")
    for name, value in (extra or {}).items():
        (root / name).write_text(value if isinstance(value, str) else json.dumps(value), encoding="utf-8")
    return root


def test_a_maskbench_directory_is_read_with_its_verdicts_and_keywords(tmp_path):
    root = write_suite(tmp_path / "mb", extra={"zz-broken.json": "{not json", "zz-plain.json": {"type": "string"}})
    assert is_maskbench_dir(root)
    source = read_schemas_source(root)
    assert source.name == "maskbench:mb"
    assert [s.id for s in source.schemas] == ["enum", "minimum", "unique"]
    minimum = next(s for s in source.schemas if s.id == "minimum")
    assert [(i.value, i.valid, i.group) for i in minimum.instances] == [
        (5, True, VALID_GROUP), (12, True, VALID_GROUP), (3, False, "minimum")]
    unique = next(s for s in source.schemas if s.id == "unique")
    assert unique.instances[1].group == "uniqueItems"
    # files of another shape are listed, with why, not dropped
    assert [(e.id, e.reason.split(":")[0]) for e in source.excluded] == [
        ("zz-broken", "unreadable or not JSON"), ("zz-plain", "not a MaskBench case ({schema, meta, tests")]


def test_a_plain_schema_directory_is_still_read_as_real_schemas(tmp_path):
    root = tmp_path / "plain"
    root.mkdir()
    (root / "a.json").write_text(json.dumps({"type": "integer", "minimum": 1}), encoding="utf-8")
    assert not is_maskbench_dir(root)
    source = read_schemas_source(root)
    assert source.name == "schemas:plain" and source.schemas[0].instances  # the oracle's instances


def test_an_invalid_test_our_validator_finds_valid_is_tallied_apart(tmp_path):
    # a suite may assert a format our validator does not check: its keyword is not guessed
    root = write_suite(tmp_path / "mb", cases=[("odd", {"type": "integer"}, [(1, True), (2, False)])])
    (schema,) = maskbench_source(root).schemas
    assert schema.instances[1].group == MASKBENCH_UNKNOWN_GROUP


def test_every_test_document_is_judged_against_its_verdict(tmp_path, smollm_vocab):
    source = maskbench_source(write_suite(tmp_path / "mb"))
    report = run_engine_check(smollm_vocab, [source], CheckConfig(engines=("gbnf",), mask_positions=0))
    (result,) = report.engines[0].sources
    # every document judged: 7 tests, 4 valid and 3 invalid
    assert (result.schemas, result.compiled, result.valid, result.invalid) == (3, 3, 4, 3)
    # llama-cpp-python's converter ignores minimum and uniqueItems (invalidation
    # errors), and enforces enum
    assert sorted((c.schema_id, c.verdict) for c in result.cases) == [("minimum", "under"), ("unique", "under")]
    assert (result.over, result.under) == (0, 2)
    # JSONSchemaBench's terms: all 3 compile, only enum has every document right
    assert result.right == 1
    assert result.coverage == 1.0
    assert result.empirical_coverage == pytest.approx(1 / 3) and result.schema_compliance == pytest.approx(1 / 3)
    groups = {g.group: g.status for g in result.groups}
    assert groups["minimum"] == "ignored" and groups["enum"] == "enforced"


def test_the_default_check_leaves_slow_engines_out_and_says_why(smollm_vocab):
    installed = [n for n in engines.names() if engines.get(n)().availability() is None]
    skipped = left_out(CheckConfig())
    assert set(skipped) == {n for n in SLOW_ENGINES if n in installed}
    source = CheckSource("s", "", ())
    assert check_steps([source], CheckConfig()) == 0  # nothing to count, but names resolve
    report = run_engine_check(smollm_vocab, [source], CheckConfig(mask_positions=0))
    assert report.settings.left_out == skipped
    assert not set(skipped) & set(report.settings.engines)
    assert {"gbnf", "llguidance"} <= set(report.settings.engines)
    if "outlines" in installed:
        assert "index" in skipped["outlines"]
    # naming an engine runs it, slow or not
    assert left_out(CheckConfig(engines=("outlines",))) == {}


def test_the_progress_line_names_slow_compiles_and_those_stopped_at_the_limit():
    # the note reads only timings and refusals
    stopped = Refusal(schema_id="s1", group="g", reason="ran past its 10 s compile limit", timed_out=True)
    fast = SchemaOutcome(None, None, 0.01, [], [])  # type: ignore[arg-type]
    slow = SchemaOutcome(None, None, 2.5, [], [])  # type: ignore[arg-type]
    limit = SchemaOutcome(None, stopped, 10.0, [], [])  # type: ignore[arg-type]
    assert _slow_note([fast], 10.0) == ""
    assert _slow_note([fast, slow, limit], 10.0) == " (slow: 2 compile(s) took 1 s or more, 1 stopped at the 10 s limit)"
