"""Batched greedy decoding gives the same outputs as the llamacpp backend's
sequential decoding, on the real embedded model."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from conformbench.backends.llamacpp.batch import (
    BatchedConfig,
    BatchedDecoder,
    LLGuidanceMask,
    SequenceRequest,
)
from conformbench.engines.base import schema_text
from conformbench.errors import BackendError, UsageError
from conformbench.records.generation import Constraint, DecodingSettings, GenerationRequest
from conformbench.records.prompt import Message, Prompt
from conformbench.validator.schema_validator import validator_for

pytestmark = pytest.mark.slow

QUESTIONS = ("What is 2+2?", "Name a colour.", "Say hello to Ada.")
ANSWER_SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "integer"}},
    "required": ["answer"],
    "additionalProperties": False,
}


def _request(question: str, max_tokens: int, constraint: Constraint | None = None) -> GenerationRequest:
    return GenerationRequest(Prompt((Message("user", question),)), DecodingSettings(max_tokens=max_tokens),
                             constraint)


@pytest.fixture(scope="module")
def decoder(llama_backend: Any) -> Iterator[BatchedDecoder]:
    # two slots for three prompts: the third waits and reuses a freed slot
    dec = BatchedDecoder(llama_backend.vocabulary.llm, BatchedConfig(max_sequences=2, ctx_per_sequence=256))
    yield dec
    dec.close()


def test_batched_greedy_equals_sequential(llama_backend: Any, decoder: BatchedDecoder) -> None:
    requests = [_request(q, 16) for q in QUESTIONS]
    sequential = [llama_backend.generate(r) for r in requests]
    batched = decoder.generate([
        SequenceRequest(tuple(llama_backend.tokenize_prompt(r.prompt)), 16) for r in requests
    ])
    assert [b.text for b in batched] == [s.text for s in sequential]
    assert [b.finish_reason for b in batched] == [s.finish_reason for s in sequential]
    assert [len(b.tokens) for b in batched] == [s.completion_tokens for s in sequential]
    assert all(b.text for b in batched)


def test_llguidance_mask_equals_constrained_backend(llama_backend: Any, decoder: BatchedDecoder) -> None:
    from llguidance import LLMatcher

    from conformbench.engines.llguidance_engine import llguidance_tokenizer

    tokenizer = llguidance_tokenizer(llama_backend.vocabulary)
    grammar = LLMatcher.grammar_from_json_schema(schema_text(ANSWER_SCHEMA))
    constraint = Constraint(ANSWER_SCHEMA, "llguidance")
    requests = [_request(q + " Reply in JSON.", 24, constraint) for q in QUESTIONS[:2]]
    sequential = [llama_backend.generate(r) for r in requests]
    batched = decoder.generate([
        SequenceRequest(tuple(llama_backend.tokenize_prompt(r.prompt)), 24,
                        LLGuidanceMask(LLMatcher(tokenizer, grammar, log_level=0), decoder.n_vocab))
        for r in requests
    ])
    assert [b.text for b in batched] == [s.text for s in sequential]
    for b in batched:
        assert b.finish_reason == "stop"
        assert validator_for(ANSWER_SCHEMA).is_valid(json.loads(b.text))


def test_prompt_over_the_sequence_budget_is_refused(decoder: BatchedDecoder) -> None:
    with pytest.raises(UsageError, match="ctx_per_sequence"):
        decoder.generate([SequenceRequest(tuple(range(1, 250)), 16)])


class _RejectingMask:
    """Allows every token, then rejects the one chosen: a broken grammar."""

    def allowed(self, n_vocab: int) -> Any:
        import numpy as np

        return np.ones(n_vocab, dtype=np.bool_)

    def consume(self, token: int) -> None:
        raise BackendError(f"rejected {token}")

    def is_stopped(self) -> bool:
        return False


def test_a_failing_mask_ends_only_its_own_sequence(llama_backend: Any, decoder: BatchedDecoder) -> None:
    tokens = [tuple(llama_backend.tokenize_prompt(_request(q, 4).prompt)) for q in QUESTIONS[:2]]
    broken, fine = decoder.generate([SequenceRequest(tokens[0], 4, _RejectingMask()),
                                     SequenceRequest(tokens[1], 4)])
    assert broken.finish_reason == "error" and broken.error is not None and "rejected" in broken.error
    assert fine.finish_reason in ("stop", "length") and fine.text
    again = decoder.generate([SequenceRequest(tokens[1], 4)])
    assert again[0].text == fine.text  # nothing left over in the KV cache
