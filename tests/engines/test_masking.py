"""Unit tests of the generic mask machinery with a scripted matcher (the real
engines are tested through it in the per-engine modules)."""

from __future__ import annotations

import numpy as np
import pytest

from conformbench.engines.masking import MaskProcessor, TokenMatcher, unpack_bitmask


class ScriptedMatcher(TokenMatcher):
    """Allows a fixed set of tokens; records what it was fed."""

    def __init__(self, allowed: set[int], reject: int | None = None) -> None:
        self.allowed = allowed
        self.reject = reject
        self.fed: list[int] = []

    def advance(self, tokens: list[int]) -> None:
        if self.reject in tokens:
            raise ValueError(f"token {self.reject} rejected")
        self.fed.extend(tokens)

    def fill_bitmask(self, bitmask: np.ndarray) -> None:
        for tok in self.allowed:
            bitmask[0, tok // 32] |= np.int32(1 << (tok % 32)) if tok % 32 < 31 else np.int32(-(2**31))


def test_unpack_bitmask_reads_little_endian_bits():
    mask = np.zeros((1, 2), dtype=np.int32)
    mask[0, 0] = 0b101
    mask[0, 1] = np.int32(-(2**31))  # bit 31 of word 1 = token 63
    assert np.flatnonzero(unpack_bitmask(mask, 64)).tolist() == [0, 2, 63]
    assert unpack_bitmask(mask, 40).shape == (40,)


def test_processor_masks_disallowed_logits_and_feeds_only_new_tokens():
    matcher = ScriptedMatcher({1, 33, 40})
    proc = MaskProcessor(matcher, prompt_tokens=3, stop_ids=frozenset({0}))
    logits = np.arange(50, dtype=np.single)
    out = proc(np.array([7, 8, 9], dtype=np.intc), logits)
    assert np.isfinite(out).nonzero()[0].tolist() == [1, 33, 40]
    assert matcher.fed == []
    proc(np.array([7, 8, 9, 33], dtype=np.intc), logits)
    proc(np.array([7, 8, 9, 33, 40, 1], dtype=np.intc), logits)
    assert matcher.fed == [33, 40, 1]
    assert proc.error is None and proc.steps == 3


def test_processor_error_allows_only_stop_tokens_and_is_recorded():
    matcher = ScriptedMatcher({1, 2}, reject=2)
    proc = MaskProcessor(matcher, prompt_tokens=1, stop_ids=frozenset({0, 5}))
    out = proc(np.array([9, 2], dtype=np.intc), np.ones(10, dtype=np.single))
    assert np.isfinite(out).nonzero()[0].tolist() == [0, 5]
    assert proc.error == "ValueError: token 2 rejected"
    # stays in the error state
    out = proc(np.array([9, 2, 0], dtype=np.intc), np.ones(10, dtype=np.single))
    assert np.isfinite(out).nonzero()[0].tolist() == [0, 5]


def test_processor_treats_an_empty_mask_as_an_error():
    proc = MaskProcessor(ScriptedMatcher(set()), prompt_tokens=0, stop_ids=frozenset({3}))
    out = proc(np.array([], dtype=np.intc), np.zeros(8, dtype=np.single))
    assert proc.error is not None and "no next token" in proc.error
    assert np.isfinite(out).nonzero()[0].tolist() == [3]


@pytest.mark.parametrize("n", [31, 32, 33])
def test_processor_handles_vocab_sizes_off_word_boundaries(n):
    proc = MaskProcessor(ScriptedMatcher({n - 1}), prompt_tokens=0, stop_ids=frozenset())
    out = proc(np.array([], dtype=np.intc), np.zeros(n, dtype=np.single))
    assert out.shape == (n,)
    assert np.isfinite(out).nonzero()[0].tolist() == [n - 1]


def test_every_mask_engines_matcher_declares_its_capabilities(smollm_vocab) -> None:
    """Each mask engine's per-generation matcher is a TokenMatcher, so what
    it can do is read, never probed: llguidance's forces tokens, forks and
    exposes its LLMatcher; the others say they do not (fork() is None, so a
    beam is re-fed from a fresh matcher), and none claims a thinking cut."""
    from conformbench.engines.base import engines
    from conformbench.engines.masking import TokenMatcher

    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    seen = {}
    for name in ("llguidance", "xgrammar", "outlines"):
        engine = engines.create(name)
        if engine.availability() is not None:
            continue
        processor = engine.compile(schema, smollm_vocab).start(0).processor
        assert processor is not None
        matcher = processor.matcher
        assert isinstance(matcher, TokenMatcher) and matcher.think_cut is None
        seen[name] = (matcher.forces, matcher.fork() is not None, matcher.llmatcher is not None)
        assert processor.can_force is matcher.forces
    assert seen.pop("llguidance") == (True, True, True)
    assert all(caps == (False, False, False) for caps in seen.values()), seen
