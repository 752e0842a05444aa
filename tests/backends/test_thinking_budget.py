"""The thinking's budget inside a decoder: at its budget, or in a loop, the
matcher allows only the stop string's tokens, one at a time, and the answer
follows under the grammar (the embedded model's vocabulary, no weights)."""

from __future__ import annotations

from typing import Any

from thinking_matcher import allowed_tokens, thinking_matcher, walk

from conformbench.backends.thinking_budget import ThinkingMatcher


def test_at_its_budget_the_thinking_is_closed_with_the_stop_string(smollm_vocab):
    budget = 4
    matcher = thinking_matcher(smollm_vocab, budget=budget)
    thought = smollm_vocab.tokenize(" three plus four is seven and more")
    assert len(thought) > budget
    assert walk(matcher, thought[:budget]) == budget
    _close_with_the_stop_string(matcher, smollm_vocab)
    assert matcher.think_cut == "budget"
    # then the answer, under the grammar: prose is refused, JSON taken
    allowed = {smollm_vocab.token_pieces[t] for t in allowed_tokens(matcher, smollm_vocab.n_vocab)}
    assert b"The" not in allowed and any(p and p.startswith(b"{") for p in allowed)
    rest = smollm_vocab.tokenize('{"answer": 7}')
    assert walk(matcher, rest) == len(rest)


def test_a_forked_matcher_keeps_the_thinking_state(smollm_vocab):
    matcher = thinking_matcher(smollm_vocab, budget=2)
    matcher.advance(smollm_vocab.tokenize(" one two")[:2])
    copy = matcher.fork()
    assert copy.thought == 2 and list(allowed_tokens(copy, smollm_vocab.n_vocab)) == smollm_vocab.tokenize("</think>")[:1]


def _close_with_the_stop_string(matcher: ThinkingMatcher, vocab: Any) -> None:
    for token in vocab.tokenize("</think>"):  # the stop string's tokens, one allowed at a time
        assert list(allowed_tokens(matcher, vocab.n_vocab)) == [token]
        assert matcher.forced() == [token]
        matcher.advance([token])
    assert matcher.closed


def test_a_looping_thinking_is_cut_and_the_answer_still_follows(smollm_vocab):
    matcher = thinking_matcher(smollm_vocab, budget=2000)
    loop = smollm_vocab.tokenize(" and then" * 200)
    taken = 0
    while matcher.think_cut is None:
        assert taken < len(loop), "the loop was never cut"
        matcher.advance([loop[taken]])
        taken += 1
    assert matcher.think_cut == "loop" and taken % 16 == 0 and taken < 2000
    _close_with_the_stop_string(matcher, smollm_vocab)
    rest = smollm_vocab.tokenize('{"answer": 7}')
    assert walk(matcher, rest) == len(rest)


def test_a_thinking_that_writes_its_stop_string_is_not_cut(smollm_vocab):
    matcher = thinking_matcher(smollm_vocab, budget=5)
    tokens = smollm_vocab.tokenize("7</think>")
    assert len(tokens) <= 5 and walk(matcher, tokens) == len(tokens)
    assert matcher.closed and matcher.think_cut is None
