"""Batched greedy decoding gives the same outputs as the llamacpp backend's
sequential decoding, on the real embedded model."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from conformbench.backends.llamacpp.batch_decoder import BatchedConfig, BatchedDecoder, SequenceRequest
from conformbench.backends.llamacpp.token_masks import LLGuidanceMask, TokenMask
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


@pytest.mark.long
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


@pytest.mark.long
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


class _RejectingMask(TokenMask):
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


@pytest.mark.long
@pytest.mark.parametrize("unified", [False, True], ids=["split-kv", "unified-kv"])
def test_sequences_of_one_prompt_share_its_prefill(llama_backend: Any, unified: bool) -> None:
    """Three copies of one prompt and one of another, two slots: the second
    copy is the first's twin (all its KV cells, whole-stream copy when split,
    tagged cells when unified, and its logits row), so its text is exactly
    the sequential one; the fourth, admitted after the first finished,
    evaluates its prompt itself (different prompts share nothing by
    default)."""
    prompts = [tuple(llama_backend.tokenize_prompt(_request(q, 12).prompt))
               for q in (QUESTIONS[0], QUESTIONS[0], QUESTIONS[1], QUESTIONS[0])]
    alone = [llama_backend.generate(_request(q, 12)).text for q in (QUESTIONS[0], QUESTIONS[1])]
    config = BatchedConfig(max_sequences=2, ctx_per_sequence=256, kv_unified=unified)
    with BatchedDecoder(llama_backend.vocabulary.llm, config) as dec:
        out = dec.generate([SequenceRequest(p, 12) for p in prompts])
        assert [o.text for o in out] == [alone[0], alone[0], alone[1], alone[0]]
        assert dec.prefix_tokens_shared == len(prompts[0])  # the twin only


@pytest.mark.long
def test_prompts_with_a_common_preamble_share_its_prefill(llama_backend: Any) -> None:
    """Arms of an item that open with the same system message, with the
    opt-in ``share_prefix``: the opening is copied, not evaluated, and here
    no output changes against the same batch without it (in general it can
    flip a near-tie, which is why it is off by default: benchmarks/sequences.py)."""
    preamble = "You are a careful assistant. Answer briefly and precisely, in plain English. " * 3
    prompts = [tuple(llama_backend.tokenize_prompt(Prompt((Message("system", preamble), Message("user", q)))))
               for q in QUESTIONS]
    texts = []
    for share in (0, 32):
        config = BatchedConfig(max_sequences=3, ctx_per_sequence=256, share_prefix=share)
        with BatchedDecoder(llama_backend.vocabulary.llm, config) as dec:
            texts.append([o.text for o in dec.generate([SequenceRequest(p, 12) for p in prompts])])
            shared = dec.prefix_tokens_shared
    assert texts[0] == texts[1] and all(texts[0])
    assert shared >= 2 * 40, f"only {shared} prompt tokens shared"  # the preamble is ~50 tokens


def test_a_twin_admitted_later_starts_from_the_kept_first_logits(llama_backend: Any) -> None:
    """Two slots: the second prompt ends after 2 tokens, so the copy of the
    first prompt takes its slot while the first is decoding: it copies the
    first's prompt cells and draws its first token from the logits the
    first kept, and its text is the sequential one."""
    q0, q1 = (tuple(llama_backend.tokenize_prompt(_request(q, 12).prompt)) for q in QUESTIONS[:2])
    alone = llama_backend.generate(_request(QUESTIONS[0], 12)).text
    config = BatchedConfig(max_sequences=2, ctx_per_sequence=256)
    with BatchedDecoder(llama_backend.vocabulary.llm, config) as dec:
        first, short, late = dec.generate([SequenceRequest(q0, 12), SequenceRequest(q1, 2), SequenceRequest(q0, 12)])
        assert len(short.tokens) <= 2 and len(first.tokens) > 2  # so `late` started while `first` ran
        assert first.text == late.text == alone
        assert dec.prefix_tokens_shared == len(q0)
