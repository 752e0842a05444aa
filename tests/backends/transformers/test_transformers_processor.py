"""The prefix-keyed constraint state of the transformers backend
(processor.py), driven by real engine matchers on the embedded model's
vocabulary (loaded without weights, no torch needed for the state logic):
a greedy walk moves one state forward in place, a branch forks it, a
matcher without ``fork`` is rebuilt by replay, a refused token kills only
its prefix, and the stop rules read like the llama.cpp backend's."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from conformbench.backends.llamacpp.vocabulary import LlamaVocabulary
from conformbench.backends.transformers.processor import PrefixMasks, StopRules, stop_at
from conformbench.engines.base import engines
from conformbench.engines.masking import TokenMatcher, unpack_bitmask
from conformbench.records.generation import DecodingSettings

SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"],
          "additionalProperties": False}
HAVE_TORCH = importlib.util.find_spec("torch") is not None


class _NoFork(TokenMatcher):
    """A real matcher seen without its ``fork`` (as outlines' and xgrammar's are)."""

    def __init__(self, matcher: TokenMatcher) -> None:
        self._m = matcher

    def advance(self, tokens: list[int]) -> None:
        self._m.advance(tokens)

    def fill_bitmask(self, bitmask: np.ndarray) -> None:
        self._m.fill_bitmask(bitmask)


def _masks(vocab: LlamaVocabulary, prompt_len: int = 3, forkable: bool = True) -> PrefixMasks:
    compiled = engines.create("llguidance").compile(SCHEMA, vocab)

    def fresh() -> TokenMatcher:
        processor = compiled.start(prompt_len).processor
        assert processor is not None
        return processor.matcher if forkable else _NoFork(processor.matcher)

    return PrefixMasks(fresh, prompt_len, vocab.n_vocab, frozenset({vocab.eos}))


def _allowed(matcher: TokenMatcher, n: int) -> np.ndarray:
    bitmask = np.zeros((1, (n + 31) // 32), dtype=np.int32)
    matcher.fill_bitmask(bitmask)
    return unpack_bitmask(bitmask, n)


def test_a_single_row_moves_one_state_forward_in_place(smollm_vocab: LlamaVocabulary) -> None:
    masks = _masks(smollm_vocab)
    toks = smollm_vocab.tokenize('{"a": 12}')
    first = masks._advance([()])[()]
    for i in range(1, len(toks) + 1):
        states = masks._advance([tuple(toks[:i])])
        assert list(states) == [tuple(toks[:i])]
        assert states[tuple(toks[:i])] is first  # the same matcher, advanced
    assert not masks.dead


@pytest.mark.parametrize("forkable", [True, False], ids=["fork", "replay"])
def test_branches_get_their_own_state(smollm_vocab: LlamaVocabulary, forkable: bool) -> None:
    masks = _masks(smollm_vocab, forkable=forkable)
    one = smollm_vocab.tokenize('{"a": 1')
    two = smollm_vocab.tokenize('{"a": 2')
    assert one[:-1] == two[:-1] and one[-1] != two[-1]
    for i in range(len(one)):
        masks._advance([tuple(one[:i])])
    states = masks._advance([tuple(one), tuple(two), tuple(one)])  # rows may repeat a prefix
    assert set(states) == {tuple(one), tuple(two)}
    assert states[tuple(one)] is not states[tuple(two)]
    # both states go on to close the object, and they are independent
    close = smollm_vocab.tokenize("}")[0]
    for prefix in (one, two):
        assert _allowed(states[tuple(prefix)], smollm_vocab.n_vocab)[close]
    after = masks._advance([(*one, close)])
    assert list(after) == [(*one, close)] and not masks.dead


def test_a_refused_token_kills_its_prefix_only(smollm_vocab: LlamaVocabulary) -> None:
    masks = _masks(smollm_vocab)
    opening = smollm_vocab.tokenize('{"a": 1')
    masks._advance([()])
    bad = smollm_vocab.tokenize("x")[0]
    states = masks._advance([(opening[0],), (bad,)])
    assert (bad,) in masks.dead and (opening[0],) in states
    assert masks.accepted([opening[0]]) and not masks.accepted([bad, 5])
    # a dead prefix's children are dead too
    masks._advance([(bad, 5), (opening[0], opening[1])])
    assert (bad, 5) in masks.dead


@pytest.mark.skipif(not HAVE_TORCH, reason="torch is not installed (pip install 'conformbench[hf]')")
def test_the_processor_masks_each_row_and_never_raises(smollm_vocab: LlamaVocabulary) -> None:
    import torch

    masks = _masks(smollm_vocab, prompt_len=2)
    n = smollm_vocab.n_vocab
    ids = torch.tensor([[7, 8], [7, 8]])
    out = masks(ids, torch.zeros(2, n))
    allowed = torch.isfinite(out)
    assert allowed[0].sum() > 0 and torch.equal(allowed[0], allowed[1])
    brace = smollm_vocab.tokenize("{")[0]
    assert allowed[0, brace] and not allowed[0, smollm_vocab.tokenize("x")[0]]
    # every row refused: masking has failed, only the stop token is allowed
    x = smollm_vocab.tokenize("x")[0]
    dead = masks(torch.tensor([[7, 8, x]]), torch.zeros(1, n))
    assert masks.error is not None
    assert torch.isfinite(dead).nonzero().tolist() == [[0, smollm_vocab.eos]]
    assert "doesn't satisfy the grammar" in masks.error and "\n" not in masks.error


def test_stop_rules_read_as_the_llamacpp_backends(smollm_vocab: LlamaVocabulary) -> None:
    def detok(out: list[int]) -> str:
        return "".join((smollm_vocab.token_pieces[t] or b"").decode("utf-8", "replace") for t in out)

    eog = frozenset({smollm_vocab.eos})
    loop = smollm_vocab.tokenize('"type": "json", ' * 40)
    rules = StopRules(detok, 0, DecodingSettings(max_tokens=1000), 1000, eog)
    assert rules.reason(loop[:16]) is None
    hit = next(n for n in range(16, len(loop) + 1, 16) if rules.reason(loop[:n]))
    assert rules.reason(loop[:hit]) == "loop" and hit % 16 == 0
    stops = StopRules(detok, 0, DecodingSettings(stop=("\n\n",)), 100, eog)
    assert stops.reason(smollm_vocab.tokenize("Answer: 4\n\nmore")) == "stop"
    assert stops.reason([*smollm_vocab.tokenize("ok"), smollm_vocab.eos]) is None  # generate's own stop
    assert stop_at("a\n\nb", ("\n\n", "b")) == 1 and stop_at("abc", ("x",)) is None
