"""The keyword probe of tool arguments (``engines probe --tools MODE``):
each probe schema (``cases``) offered as the parameters of one
function through the server's ``tools`` API, in a tools mode
(``tool_choice`` auto, required or named, ``strict`` off or on), with the
probe's nudging prompts; the first call's arguments are validated against
the whole schema. Verdicts are the server verdicts of server.py:

* enforced      every sample made a call whose arguments satisfy the schema;
* not enforced  a call's arguments violate the keyword;
* inconclusive  a sample made no call (``auto`` forces none), its arguments
                were not JSON, or they broke the schema elsewhere;
* refused       the server answered the schema with an HTTP 400/422.

A mode is one row group of the report (its engine label is
``tools[MODE]``); the run's tools canary (audits/tool_canary.py) goes first.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from conformbench.audits.canary import server_error_text
from conformbench.audits.keyword_classes import keyword_status
from conformbench.audits.probe.cases import ProbeCase
from conformbench.audits.probe.records import TECHNIQUE, EngineProbe, KeywordResult, ProbeSample, Status
from conformbench.audits.probe.server import schema_refusal, server_verdict
from conformbench.audits.tool_canary import tool_canary
from conformbench.backends.base import Backend
from conformbench.engines.base import schema_text
from conformbench.records.generation import DecodingSettings, GenerationRequest
from conformbench.records.prompt import Message, Prompt
from conformbench.records.tool_calls import ToolFunction, ToolMode, ToolRequest
from conformbench.validator.schema_validator import validator_for

__all__ = ["PROBE_FUNCTION", "probe_tool_mode"]

PROBE_FUNCTION = "set_value"
_TECHNIQUE = f"{TECHNIQUE} through the tools API"


def _sample(backend: Backend, case: ProbeCase, prompt: str, mode: ToolMode, max_tokens: int,
            seed: int) -> ProbeSample | str:
    """One nudged call, or the server's refusal of the schema (a string)."""
    function = ToolFunction(PROBE_FUNCTION, "Set a value.", case.schema, PROBE_FUNCTION)
    asked = f"Call {PROBE_FUNCTION}. {prompt}"
    request = GenerationRequest(Prompt((Message("user", asked),)),
                                DecodingSettings(max_tokens=max_tokens, temperature=0.0, seed=seed),
                                tools=ToolRequest((function,), mode))
    result = backend.generate(request)
    refusal = schema_refusal(result.error if result.finish_reason == "error" else None)
    if refusal is not None:
        return refusal
    if result.finish_reason == "error":
        return ProbeSample(prompt=asked, text="", finish_reason="error", parsed=False, violations=[],
                           error=server_error_text(result.error or "no detail"))
    calls = result.tool_calls or ()
    carried = json.dumps(json.loads(result.engine_input or "{}").get("tools")).find(f'"{case.keyword}"') >= 0
    if not calls:
        return ProbeSample(prompt=asked, text=result.content or "", finish_reason=result.finish_reason,
                           parsed=False, violations=[], error="no call", carried=carried)
    try:
        arguments = json.loads(calls[0].arguments)
    except (ValueError, RecursionError):
        return ProbeSample(prompt=asked, text=calls[0].arguments, finish_reason=result.finish_reason, parsed=False,
                           violations=[], error=None, carried=carried)
    found = validator_for(case.schema).violations(arguments)
    return ProbeSample(prompt=asked, text=calls[0].arguments, finish_reason=result.finish_reason, parsed=True,
                       violations=sorted({v.keyword for v in found}), error=None, carried=carried)


def _keyword(backend: Backend, case: ProbeCase, mode: ToolMode, n: int, max_tokens: int, seed: int,
             tick: Callable[[str, int], None]) -> KeywordResult:
    samples: list[ProbeSample] = []
    for i in range(n):
        sample = _sample(backend, case, case.prompts[i % len(case.prompts)], mode, max_tokens, seed)
        tick(f"tools[{mode.spec}] {case.keyword}", 1)
        if isinstance(sample, str):
            tick(f"tools[{mode.spec}] {case.keyword}", n - i - 1)
            refused = keyword_status(compiled=0, refused=1, violations_tried=0, let_through=0)
            return KeywordResult(keyword=case.keyword, status=refused, detail=sample,
                                 probe_schema=schema_text(case.schema), samples=[], technique=_TECHNIQUE)
        samples.append(sample)
    status, detail = _verdict(samples, case.keyword)
    return KeywordResult(keyword=case.keyword, status=status, detail=detail, probe_schema=schema_text(case.schema),
                         samples=samples, technique=_TECHNIQUE)


def _verdict(samples: list[ProbeSample], keyword: str) -> tuple[Status, str]:
    failed = [s.error for s in samples if s.finish_reason == "error"]
    if failed:
        return "inconclusive", f"{len(failed)}/{len(samples)} requests failed: {failed[0]}"
    uncalled = sum(s.error == "no call" for s in samples)
    if uncalled:
        return "inconclusive", f"{uncalled}/{len(samples)} answers made no call: nothing to judge"
    strict = server_verdict(samples, keyword)
    if strict is not None:
        return strict
    if any(not s.parsed for s in samples):
        return "inconclusive", "a call's arguments were not JSON"
    return "enforced", f"0/{len(samples)} calls' arguments violate {keyword}"


def probe_tool_mode(backend: Backend, mode: ToolMode, cases: list[ProbeCase], n: int, max_tokens: int, seed: int,
                    tick: Callable[[str, int], None]) -> EngineProbe:
    """Every case in ``mode``, after the mode's tools canary."""
    canary = tool_canary(backend, mode, seed)
    tick(f"tools[{mode.spec}] canary", 1)
    passed = canary.forced in ("forced", "not asked") and canary.held is not False and canary.error is None
    results = [_keyword(backend, case, mode, n, max_tokens, seed, tick) for case in cases]
    return EngineProbe(engine=f"tools[{mode.spec}]", output_format="json", version=None, available=True, reason=None,
                       canary="passed" if passed else "failed", canary_detail=canary.line(), keywords=results)
