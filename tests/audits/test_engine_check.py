"""The engine check on known cases: each verdict (over-constrained,
under-constrained, refused, timed out, right) shown on a schema where a
given engine is known to produce it, with the real engines and the embedded
model's vocabulary-only tokenizer (no weights, no decoding)."""

from __future__ import annotations

import pytest

from conformbench.audits.engine_check import CheckConfig, check_steps, run_engine_check
from conformbench.audits.engine_check.prepare import mask_positions, serialise
from conformbench.audits.engine_check.records import SourceResult
from conformbench.audits.engine_check.sources import CheckSchema, CheckSource, Instance, official_suite_source
from conformbench.audits.keyword_classes import keyword_status
from conformbench.errors import UnknownNameError, UsageError


def _source(schema_id: str, group: str, schema, *documents: tuple[object, bool]) -> CheckSource:
    instances = tuple(Instance(f"doc {i}", value, valid, group) for i, (value, valid) in enumerate(documents))
    return CheckSource("known", "", (CheckSchema(schema_id, group, "", schema, instances),))


def _check(vocab, source: CheckSource, engine: str, **settings) -> SourceResult:
    config = CheckConfig(engines=(engine,), mask_positions=settings.pop("mask_positions", 1), **settings)
    report = run_engine_check(vocab, [source], config)
    (result,) = report.engines[0].sources
    return result


MINIMUM = _source("minimum", "minimum", {"type": "integer", "minimum": 5}, (5, True), (12, True), (3, False))


def test_gbnf_ignores_minimum_under_constrained(smollm_vocab):
    # llama-cpp-python's JSON-Schema-to-GBNF converter has no numeric bounds
    result = _check(smollm_vocab, MINIMUM, "gbnf")
    assert (result.compiled, result.over, result.under) == (1, 0, 1)
    (case,) = result.cases
    assert (case.verdict, case.document, case.detail) == ("under", "3", "accepted")
    assert result.groups[0].status == "ignored"
    assert result.compliance == pytest.approx(2 / 3)


def test_outlines_ignores_minimum_under_constrained(smollm_vocab):
    result = _check(smollm_vocab, MINIMUM, "outlines")
    assert (result.over, result.under) == (0, 1)
    assert result.groups[0].status == "ignored"


def test_llguidance_enforces_minimum(smollm_vocab):
    result = _check(smollm_vocab, MINIMUM, "llguidance")
    assert (result.over, result.under, result.cases) == (0, 0, [])
    assert result.groups[0].status == "enforced"
    assert result.compliance == 1.0


def test_gbnf_over_constrains_an_empty_subschema(smollm_vocab):
    # the converter turns {} (any value) into "an object"
    source = _source("anyvalue", "properties", {"properties": {"foo": {}}}, ({"foo": 1}, True), ({"foo": {}}, True))
    result = _check(smollm_vocab, source, "gbnf")
    assert (result.over, result.under) == (1, 0)
    (case,) = result.cases
    assert (case.verdict, case.document) == ("over", '{"foo":1}')
    assert case.detail.startswith("token ") and "refused: '1'" in case.detail


@pytest.mark.parametrize("engine", ["llguidance", "outlines"])
def test_an_integral_float_is_over_constrained_by_integer_grammars(smollm_vocab, engine):
    # 1.0 is an integer in JSON Schema; these grammars only spell integers without a fraction
    source = _source("integer", "type", {"type": "integer"}, (1, True), (1.0, True), (1.5, False))
    result = _check(smollm_vocab, source, engine)
    assert [(c.verdict, c.document) for c in result.cases] == [("over", "1.0")]
    assert result.groups[0].status == "enforced"


def test_llguidance_in_lenient_mode_compiles_unique_items_but_does_not_enforce_them(smollm_vocab):
    # our llguidance engine compiles leniently (docs/runtime.md): the keyword is
    # left to the validator, so the grammar under-constrains
    source = _source("unique", "uniqueItems", {"type": "array", "uniqueItems": True}, ([1, 2], True), ([1, 1], False))
    result = _check(smollm_vocab, source, "llguidance")
    assert (result.compiled, result.refused, result.timed_out) == (1, 0, 0)
    assert [(c.verdict, c.document) for c in result.cases] == [("under", "[1,1]")]
    assert result.groups[0].status != "refused"


def test_llguidance_refuses_what_even_lenient_mode_cannot_compile(smollm_vocab):
    source = _source("bad", "pattern", {"type": "string", "pattern": "(?<=a)b"}, ("ab", True), ("b", False))
    result = _check(smollm_vocab, source, "llguidance")
    assert (result.compiled, result.refused, result.timed_out) == (0, 1, 0)
    assert (result.valid, result.invalid, result.unjudged) == (0, 0, 2)
    assert result.refusals[0].reason and not result.refusals[0].timed_out
    assert result.coverage == 0.0 and result.compliance is None and result.mask.n == 0


def test_outlines_index_build_past_the_limit_is_a_timed_out_refusal(smollm_vocab):
    slow = {"properties": {"foo": {}, "bar": {}}, "patternProperties": {"^v": {}}, "additionalProperties": False}
    source = _source("slow", "additionalProperties", slow, ({"foo": 1}, True))
    result = _check(smollm_vocab, source, "outlines", compile_timeout_s=0.5)
    assert (result.refused, result.timed_out) == (1, 1)
    assert "ran past" in result.refusals[0].reason


def test_costs_are_timed_on_compiled_schemas(smollm_vocab):
    result = _check(smollm_vocab, MINIMUM, "llguidance", mask_positions=3)
    assert result.compile.n == 1 and result.compile.p50_ms is not None and result.compile.p50_ms > 0
    # the first valid document "5" is one token: positions 0 and 1
    assert result.mask.n == 2


def test_the_official_suite_on_one_keyword_group(smollm_vocab):
    suite = official_suite_source("2020-12")
    unique = CheckSource(suite.name, suite.draft, tuple(s for s in suite.schemas if s.group == "uniqueItems"))
    gbnf = _check(smollm_vocab, unique, "gbnf")
    llguidance = _check(smollm_vocab, unique, "llguidance")
    assert [g.group for g in gbnf.groups] == ["uniqueItems"]
    # the converter compiles most of these schemas and lets duplicates through
    assert gbnf.groups[0].status == "ignored" and gbnf.under > 0
    # the duplicates it lets through are exactly those of its two-item prefixItems tuples (two schemas)
    assert sorted(c.document for c in gbnf.cases if c.verdict == "under") == ["[false,false]"] * 2 + ["[true,true]"] * 2
    # llguidance (lenient, as our engine compiles it) leaves uniqueItems to the validator
    assert llguidance.groups[0].status == "ignored" and llguidance.under > 0
    # it accepts every non-unique document and refuses the two whose extra item breaks `items: false`;
    # no valid document is refused
    invalid = [i.description for s in unique.schemas for i in s.instances if not i.valid]
    duplicates = [d for d in invalid if not d.startswith("extra items are invalid")]
    assert len(invalid) - len(duplicates) == 2
    assert sorted(c.description for c in llguidance.cases) == sorted(duplicates) and llguidance.over == 0
    documents = sum(len(s.instances) for s in unique.schemas)
    assert gbnf.valid + gbnf.invalid + gbnf.unjudged == documents


def test_steps_count_schemas_per_installed_engine_and_names_are_checked():
    source = CheckSource("s", "", MINIMUM.schemas * 3)
    assert check_steps([source], CheckConfig(engines=("gbnf", "llguidance"))) == 6
    with pytest.raises(UnknownNameError, match="did you mean 'outlines'"):
        check_steps([source], CheckConfig(engines=("outlnes",)))


def test_draft_specific_sources_run_on_engines_claiming_the_draft():
    draft7 = CheckSource("suite/draft7", "7", MINIMUM.schemas)
    assert check_steps([draft7], CheckConfig(engines=("llguidance",))) == 0
    assert check_steps([draft7], CheckConfig(engines=("llguidance",), all_drafts=True)) == 1


def test_keyword_status():
    assert keyword_status(compiled=0, refused=2, violations_tried=0, let_through=0) == "refused"
    assert keyword_status(compiled=1, refused=2, violations_tried=3, let_through=1) == "ignored"
    assert keyword_status(compiled=1, refused=0, violations_tried=3, let_through=0) == "enforced"
    assert keyword_status(compiled=1, refused=0, violations_tried=0, let_through=0) == "inconclusive"


def test_mask_positions_spread_over_the_stream():
    assert mask_positions(10, 4) == (0, 3, 7, 10)
    assert mask_positions(2, 4) == (0, 1, 2)
    assert mask_positions(0, 4) == (0,)
    assert mask_positions(10, 0) == ()


def test_serialisations():
    assert serialise({"a": [1, "é"]}, "compact") == '{"a":[1,"é"]}'
    assert serialise({"a": [1, 2]}, "spaced") == '{"a": [1, 2]}'
    # a lone surrogate cannot be UTF-8: it is written as an escape
    assert serialise("\ud800", "compact") == '"\\ud800"'
    with pytest.raises(UsageError, match="did you mean 'compact'"):
        serialise(1, "compakt")
