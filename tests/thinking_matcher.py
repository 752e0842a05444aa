"""The thinking grammar's matcher as a decoder holds it, and two ways to
drive it by hand: shared by the grammar's and the budget's tests."""

from __future__ import annotations

from typing import Any

import numpy as np

from conformbench.backends.thinking_budget import ThinkingMatcher, with_thinking
from conformbench.engines.base import engines
from conformbench.engines.masking import unpack_bitmask
from conformbench.records.generation import Thinking

ANSWER = {"type": "object", "properties": {"answer": {"type": "number"}}, "required": ["answer"],
          "additionalProperties": False}


def thinking_matcher(vocab: Any, budget: int = 384, stop: str = "</think>") -> ThinkingMatcher:
    thinking = Thinking(stop, budget)
    compiled = with_thinking(engines.get("llguidance")().compile(ANSWER, vocab, thinking=thinking), thinking, vocab)
    processor = compiled.start(0).processor
    assert processor is not None
    matcher = processor.matcher
    assert isinstance(matcher, ThinkingMatcher)
    return matcher


def allowed_tokens(matcher: ThinkingMatcher, n_vocab: int) -> np.ndarray:
    bitmask = np.zeros((1, (n_vocab + 31) // 32), dtype=np.int32)
    matcher.fill_bitmask(bitmask)
    return np.flatnonzero(unpack_bitmask(bitmask, n_vocab))


def walk(matcher: ThinkingMatcher, tokens: list[int]) -> int:
    """Tokens taken before the grammar refuses one."""
    for i, token in enumerate(tokens):
        try:
            matcher.advance([token])
        except ValueError:
            return i
    return len(tokens)
