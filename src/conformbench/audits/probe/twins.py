"""The probe's third technique for a server: greedy twins.

A keyword stays inconclusive on a server when its nudged samples are cut
at the cap or unreadable: a small model turned away from the value it was
asked for (``"Al"`` under ``minLength: 25``) often writes on and on, and a
cut answer cannot be validated. Logprobs do not help where the server
takes them after its grammar's mask (vLLM 0.32: the bitmask is applied to
the logits before the sampler computes them), so they never show an
override.

Twins ask the model, greedily, for exactly the violating document twice
with the same prompt and prefill (``framings``: "Copy this JSON exactly:
{...}", then with a JSON code fence prefilled so that the model's own
first token is ``{`` and the grammar does not move the answer at its
start, then the case's last nudging prompt): without the schema, and with
it. Greedy decoding is deterministic, so the
two answers are the same text until the first token the grammar refused.
Then

* the constrained twin parses and violates the keyword: not enforced;
* the free twin violates the keyword and the constrained twin leaves it
  inside the keyword's value (whitespace aside): the grammar turned the
  model away from the violating value, which is evidence of enforcement
  even where the constrained twin is then cut at the cap: enforced;
* anything else (the free twin does not violate the keyword, or does not
  parse; they part before the value): no verdict, with that reason.
"""

from __future__ import annotations

import json
from dataclasses import replace

from conformbench.audits.canary import grammar_request
from conformbench.audits.keyword_classes import KeywordStatus
from conformbench.audits.probe.cases import ProbeCase
from conformbench.audits.probe.records import ProbeSample
from conformbench.backends.openai.backend import OpenAICompatBackend
from conformbench.records.generation import Constraint, GenerationResult
from conformbench.records.prompt import Message, Prompt
from conformbench.records.spec import SERVER_ENGINE
from conformbench.validator.schema_validator import validator_for

__all__ = ["FENCE", "TWIN_TECHNIQUE", "framings", "parting", "twin_verdict"]

TWIN_TECHNIQUE = "greedy twins (the same prompt and prefill without and with the schema)"
#: the prefill both twins continue
FENCE = "```json\n"


def _squeezed(text: str) -> str:
    return "".join(text.split())


def parting(free: str, constrained: str, field: str | None) -> tuple[int | None, int]:
    """(where the two texts first differ, None where one is the other's
    start; where ``field``'s value starts in the free text), both in the
    texts with every whitespace removed; the value starts at 0 when
    ``field`` is None or not found."""
    a, b = _squeezed(free), _squeezed(constrained)
    at = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), None)
    key = a.find(f'"{field}":') if field is not None else -1
    return at, (key + len(field) + 3 if key >= 0 and field is not None else 0)


def _violations(text: str, case: ProbeCase) -> list[str] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return sorted({v.keyword for v in validator_for(case.schema).violations(value)})


def _sample(prompt: str, result: GenerationResult, case: ProbeCase, free: bool) -> ProbeSample:
    text = result.text.split("```")[0] if free else result.text
    found = _violations(text, case)
    return ProbeSample(prompt=prompt, text=result.text, finish_reason=result.finish_reason, parsed=found is not None,
                       violations=found or [], error=result.error, twin="free" if free else "constrained")


#: the violating document of the cases whose last prompt is not one
_DOCUMENTS = {"required": '{"a": 1}', "additionalProperties": '{"a": 1, "extra": 2}',
              "minProperties": '{"x": 1}', "maxProperties": '{"a": 1, "b": 2, "c": 3}'}


def framings(case: ProbeCase) -> list[tuple[str, str]]:
    """(prompt, prefill) pairs asking for exactly the violating document,
    tried in order until one decides: a copy request (unprefilled, then
    prefilled with a code fence), then the case's own last prompt, fenced."""
    last = case.prompts[-1]
    document = _DOCUMENTS.get(case.keyword) or last.split(": ", 1)[-1]
    copy = f"Copy this JSON exactly: {document}"
    return [(copy, ""), (copy, FENCE), (last, FENCE)]


def twin_verdict(backend: OpenAICompatBackend, case: ProbeCase, max_tokens: int,
                 seed: int) -> tuple[KeywordStatus | None, str, list[ProbeSample]]:
    """The first verdict of the twins over ``framings`` (None: none, and
    why), and every twin's answer as a sample (free first in each pair)."""
    samples: list[ProbeSample] = []
    reasons: list[str] = []
    for prompt, prefill in framings(case):
        status, why, pair = _twins(backend, case, prompt, prefill, max_tokens, seed)
        samples += pair
        if status is not None:
            return status, why, samples
        reasons.append(why)
    return None, "; ".join(dict.fromkeys(reasons)), samples


def _twins(backend: OpenAICompatBackend, case: ProbeCase, prompt: str, prefill: str, max_tokens: int,
           seed: int) -> tuple[KeywordStatus | None, str, list[ProbeSample]]:
    question = Prompt((Message("user", prompt),), assistant_prefix=prefill)
    constrained_request = grammar_request(question, Constraint(case.schema, SERVER_ENGINE), max_tokens, seed)
    free_result, constrained_result = backend.generate_many(
        [replace(constrained_request, constraint=None), constrained_request])
    free, constrained = _sample(prompt, free_result, case, True), _sample(prompt, constrained_result, case, False)
    samples = [free, constrained]
    if "error" in (free.finish_reason, constrained.finish_reason):
        return None, f"a twin failed: {free.error or constrained.error}", samples
    if constrained.parsed and case.keyword in constrained.violations:
        return "not enforced", f"the constrained twin violates {case.keyword} (the server applied the schema)", samples
    if not free.parsed or case.keyword not in free.violations:
        return None, f"the free twin does not violate {case.keyword}: nothing to turn away from", samples
    field = next(iter(case.schema.get("properties") or {}), None)
    at, value = parting(free_result.text.split("```")[0], constrained_result.text, field)
    if at is None:
        return None, "the twins do not part: the grammar never turned the model away", samples
    if at < value:
        return None, "the twins part before the keyword's value: the grammar acted elsewhere first", samples
    ending = "then cut at the cap" if not constrained.parsed else "parsed, without that violation"
    return "enforced", (f"without the schema the model writes a value violating {case.keyword}; with it the "
                        f"answer leaves that value inside it ({ending})"), samples
