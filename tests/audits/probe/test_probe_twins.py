"""The server probe's ways to decide a keyword beyond nudged samples
(audits/probe/twins.py, probe/server.py's schema_refusal): the pure parts. The
techniques run live against vLLM in tests/testing/test_vllm_server.py."""

from __future__ import annotations

import json

from conformbench.audits.probe.cases import PROBE_CASES
from conformbench.audits.probe.markdown import verdict_cell
from conformbench.audits.probe.records import KeywordResult, ProbeSample
from conformbench.audits.probe.server import schema_refusal
from conformbench.audits.probe.twins import FENCE, framings, parting
from conformbench.validator.schema_validator import validator_for


def test_a_400_or_422_is_the_servers_refusal_with_its_own_message() -> None:
    body = json.dumps({"error": {"message": "features not supported by xgrammar.", "code": 400}})
    assert schema_refusal(f"HTTP 400: {body}") == "HTTP 400: features not supported by xgrammar."
    assert schema_refusal("HTTP 422: not json at all") == "HTTP 422: not json at all"
    assert schema_refusal('HTTP 400: {"message": "bad schema"}') == "HTTP 400: bad schema"
    # a server fault, a timeout or no error at all is not a refusal of the schema
    assert schema_refusal("HTTP 500: boom") is None
    assert schema_refusal("timed out after 3 tries") is None
    assert schema_refusal(None) is None


def test_twins_part_where_the_grammar_refused_whitespace_aside() -> None:
    free = '{\n  "name": "Al"\n}'
    # the grammar refused the closing quote after "Al": they part inside the value
    at, value = parting(free, '{"name": "Al-Amina-12345', "name")
    assert at is not None and at >= value and value == len('{"name":')
    # they part at the key: before the value
    at, value = parting(free, '{"nam": "x"}', "name")
    assert at is not None and at < value
    # one is the other's start (a cut twin that never left the free text): no parting
    assert parting(free, '{"name": "A', "name")[0] is None
    # no property to look for (minProperties): the whole document is the value
    assert parting('{"x": 1}', '{"x": 1, "y": 2}', None)[1] == 0


def test_every_case_has_a_violating_document_to_copy() -> None:
    for case in PROBE_CASES:
        (copy, bare), (fenced, fence), (last, last_fence) = framings(case)
        assert copy == fenced and bare == "" and fence == last_fence == FENCE and last == case.prompts[-1]
        document = json.loads(copy.split(": ", 1)[1])
        found = {v.keyword for v in validator_for(case.schema).violations(document)}
        assert case.keyword in found, (case.keyword, document, found)


def test_a_twin_decided_verdict_says_so_and_twins_are_not_counted_as_held() -> None:
    def sample(violations: list[str], twin: str | None = None, parsed: bool = True) -> ProbeSample:
        return ProbeSample(prompt="p", text="{}", finish_reason="stop" if parsed else "length", parsed=parsed,
                           violations=violations, twin=twin)  # type: ignore[arg-type]

    cut = [sample([], parsed=False), sample([], parsed=False)]
    twins = [sample(["minItems"], "free"), sample([], "constrained", parsed=False)]
    decided = KeywordResult(keyword="minItems", status="enforced", detail="d", probe_schema="{}",
                            samples=[*cut, *twins])
    assert verdict_cell(decided) == "enforced (twins)"
    plain = KeywordResult(keyword="minItems", status="enforced", detail="d", probe_schema="{}",
                          samples=[sample([]), sample([])])
    assert verdict_cell(plain) == "enforced (2/2 held)"
    assert "twin" not in plain.samples[0].model_dump(mode="json")  # engines.json unchanged for nudged samples
