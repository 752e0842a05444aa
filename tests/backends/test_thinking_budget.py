"""The thinking's budget inside a decoder: at its budget, or in a loop, the
matcher allows only the stop string's tokens, one at a time, and the answer
follows under the grammar (the embedded model's vocabulary, no weights)."""

from __future__ import annotations

from typing import Any

import numpy as np

from conformbench.backends.thinking_budget import ThinkingMatcher, with_thinking
from conformbench.engines.base import engines
from conformbench.engines.masking import unpack_bitmask
from conformbench.records.generation import Thinking

ANSWER = {"type": "object", "properties": {"answer": {"type": "number"}}, "required": ["answer"],
          "additionalProperties": False}


def _matcher(vocab: Any, budget: int = 384, stop: str = "</think>") -> ThinkingMatcher:
    thinking = Thinking(stop, budget)
    compiled = with_thinking(engines.get("llguidance")().compile(ANSWER, vocab, thinking=thinking), thinking, vocab)
    processor = compiled.start(0).processor
    assert processor is not None
    matcher = processor.matcher
    assert isinstance(matcher, ThinkingMatcher)
    return matcher


def _allowed(matcher: ThinkingMatcher, n_vocab: int) -> np.ndarray:
    bitmask = np.zeros((1, (n_vocab + 31) // 32), dtype=np.int32)
    matcher.fill_bitmask(bitmask)
    return np.flatnonzero(unpack_bitmask(bitmask, n_vocab))


def _walk(matcher: ThinkingMatcher, tokens: list[int]) -> int:
    """Tokens taken before the grammar refuses one."""
    for i, token in enumerate(tokens):
        try:
            matcher.advance([token])
        except ValueError:
            return i
    return len(tokens)


def test_at_its_budget_the_thinking_is_closed_with_the_stop_string(smollm_vocab):
    budget = 4
    matcher = _matcher(smollm_vocab, budget=budget)
    thought = smollm_vocab.tokenize(" three plus four is seven and more")
    assert len(thought) > budget
    assert _walk(matcher, thought[:budget]) == budget
    _close_with_the_stop_string(matcher, smollm_vocab)
    assert matcher.think_cut == "budget"
    # then the answer, under the grammar: prose is refused, JSON taken
    allowed = {smollm_vocab.token_pieces[t] for t in _allowed(matcher, smollm_vocab.n_vocab)}
    assert b"The" not in allowed and any(p and p.startswith(b"{") for p in allowed)
    rest = smollm_vocab.tokenize('{"answer": 7}')
    assert _walk(matcher, rest) == len(rest)


def test_a_forked_matcher_keeps_the_thinking_state(smollm_vocab):
    matcher = _matcher(smollm_vocab, budget=2)
    matcher.advance(smollm_vocab.tokenize(" one two")[:2])
    copy = matcher.fork()
    assert copy.thought == 2 and list(_allowed(copy, smollm_vocab.n_vocab)) == smollm_vocab.tokenize("</think>")[:1]


def _close_with_the_stop_string(matcher: ThinkingMatcher, vocab: Any) -> None:
    for token in vocab.tokenize("</think>"):  # the stop string's tokens, one allowed at a time
        assert list(_allowed(matcher, vocab.n_vocab)) == [token]
        assert matcher.forced() == [token]
        matcher.advance([token])
    assert matcher.closed


def test_a_looping_thinking_is_cut_and_the_answer_still_follows(smollm_vocab):
    matcher = _matcher(smollm_vocab, budget=2000)
    loop = smollm_vocab.tokenize(" and then" * 200)
    taken = 0
    while matcher.think_cut is None:
        assert taken < len(loop), "the loop was never cut"
        matcher.advance([loop[taken]])
        taken += 1
    assert matcher.think_cut == "loop" and taken % 16 == 0 and taken < 2000
    _close_with_the_stop_string(matcher, smollm_vocab)
    rest = smollm_vocab.tokenize('{"answer": 7}')
    assert _walk(matcher, rest) == len(rest)


def test_a_thinking_that_writes_its_stop_string_is_not_cut(smollm_vocab):
    matcher = _matcher(smollm_vocab, budget=5)
    tokens = smollm_vocab.tokenize("7</think>")
    assert len(tokens) <= 5 and _walk(matcher, tokens) == len(tokens)
    assert matcher.closed and matcher.think_cut is None
