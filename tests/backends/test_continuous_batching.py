"""The llamacpp backend's continuous batching (``extra = {batched = S}``) on
the real embedded model: outputs equal sequential decoding, greedy free text,
llguidance- and GBNF-constrained, with stop strings, and sampled (K seeds of
one prompt sharing one prefill); beams stay sequential; the option is checked and recorded."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from conformbench.backends.base import backends
from conformbench.errors import UsageError
from conformbench.records.generation import BackendConfig, Constraint, DecodingSettings, GenerationRequest
from conformbench.records.prompt import Message, Prompt

ANSWER_SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "integer"}},
    "required": ["answer"],
    "additionalProperties": False,
}
QUESTIONS = ("What is 2+2?", "Name a colour.", "Say hello to Ada.", "Count to three.")


def _request(question: str, max_tokens: int, constraint: Constraint | None = None,
             stop: tuple[str, ...] = ()) -> GenerationRequest:
    return GenerationRequest(Prompt((Message("user", question),)),
                             DecodingSettings(max_tokens=max_tokens, stop=stop), constraint)


def test_the_option_is_checked() -> None:
    for bad in (-1, True, "4"):
        with pytest.raises(UsageError, match="batched must be (a whole number|between 0 and 256)"):
            backends.get("llamacpp")(BackendConfig(extra={"batched": bad}))


@pytest.fixture(scope="module")
def batched_backend() -> Iterator[Any]:
    # same n_ctx and threads as the shared sequential backend (conftest)
    backend = backends.get("llamacpp")(BackendConfig(n_ctx=2048, threads=1, extra={"batched": 3}))
    yield backend
    backend.close()


@pytest.mark.long
@pytest.mark.slow
def test_batched_greedy_equals_sequential(llama_backend: Any, batched_backend: Any) -> None:
    constraint = Constraint(ANSWER_SCHEMA, "llguidance")
    requests = [_request(q, 20) for q in QUESTIONS]  # 4 items, 3 slots: one slot is refilled
    requests += [_request(q + " Reply in JSON.", 24, constraint) for q in QUESTIONS]
    requests.append(_request("List three fruits, one per line.", 24, stop=("\n",)))
    sequential = [llama_backend.generate(r) for r in requests]
    batched = batched_backend.generate_many(requests)
    assert [b.text for b in batched] == [s.text for s in sequential]
    assert [b.finish_reason for b in batched] == [s.finish_reason for s in sequential]
    assert [b.completion_tokens for b in batched] == [s.completion_tokens for s in sequential]
    assert all(json.loads(b.text).keys() == {"answer"} for b in batched[4:8])
    assert batched_backend.batched.generations == len(requests)
    speedups = batched_backend.metadata()["speedups"]
    assert speedups["batched_sequences"] == 3 and speedups["batched_generations"] == len(requests)


@pytest.mark.long
@pytest.mark.slow
def test_gbnf_and_samples_are_batched_and_equal_sequential(llama_backend: Any, batched_backend: Any) -> None:
    before = batched_backend.batched.generations
    shared_before = batched_backend.batched.prefix_tokens_shared
    requests = [_request(q + " Reply in JSON.", 24, Constraint(ANSWER_SCHEMA, "gbnf")) for q in QUESTIONS[:2]]
    sampled = _request("Write a short poem about the sea.", 24)
    # three seeds of one prompt, free and under llguidance: three slots, one prefill each set
    requests += [replace(sampled, settings=replace(sampled.settings, temperature=0.8, seed=s)) for s in range(3)]
    json_sampled = _request("Pick a number. Reply in JSON.", 24, Constraint(ANSWER_SCHEMA, "llguidance"))
    requests += [replace(json_sampled, settings=replace(json_sampled.settings, temperature=1.0, seed=s))
                 for s in range(3)]
    sequential = [llama_backend.generate(r) for r in requests]
    batched = batched_backend.generate_many(requests)
    assert [b.text for b in batched] == [s.text for s in sequential]
    assert [b.finish_reason for b in batched] == [s.finish_reason for s in sequential]
    assert len({b.text for b in batched[2:5]}) > 1, "the seeds drew the same text: not a sampling test"
    assert all(json.loads(b.text).keys() == {"answer"} for b in batched[:2] + batched[5:])
    assert batched_backend.batched.generations == before + len(requests)
    # each later seed of a prompt copied all of its prompt but the last token
    prompt = len(llama_backend.tokenize_prompt(sampled.prompt))
    assert batched_backend.batched.prefix_tokens_shared - shared_before >= 2 * (prompt - 1)
    assert batched_backend.metadata()["speedups"]["batched_prefix_tokens_shared"] >= 2 * (prompt - 1)


@pytest.mark.slow
def test_beams_stay_sequential(batched_backend: Any) -> None:
    before = batched_backend.batched.generations
    beams = _request("What is 2+2?", 12)
    beams = replace(beams, settings=replace(beams.settings, beams=2))
    out = batched_backend.generate_many([beams])
    assert batched_backend.batched.generations == before  # beam search has its own decoder
    # (not compared with the session's shared backend: its beam decoder must stay unmade
    # for test_llamacpp_beams)
    assert batched_backend.instruments.beams is not None and batched_backend.instruments.beams.generations == 1
    assert out[0].beams == 2 and out[0].error is None and out[0].text
