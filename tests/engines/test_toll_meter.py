"""The mask's toll measured step by step (engines/toll_meter.py): the allowed
share is the softmax of the raw logits summed over the allowed tokens, the
top token's fate is read from the unconstrained argmax, and the summary
keeps the per-step values only when asked."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import softmax

from conformbench.engines.masking import MaskProcessor, TokenMatcher
from conformbench.engines.toll_meter import TollMeter, allowed_share
from conformbench.records.mask_toll import MaskToll
from conformbench.records.replay import GenerationRecord


def test_the_share_is_the_softmax_mass_of_the_allowed_tokens() -> None:
    rng = np.random.default_rng(7)
    logits = rng.normal(0, 4, 1000).astype(np.float32)
    allowed = rng.random(1000) < 0.1
    share, top = allowed_share(logits, allowed)
    assert share == pytest.approx(float(softmax(logits.astype(np.float64))[allowed].sum()), rel=1e-6)
    assert top == bool(allowed[int(np.argmax(logits))])


def test_everything_allowed_is_a_share_of_one_and_one_token_its_probability() -> None:
    logits = np.array([2.0, -1.0, 0.5, 3.0], dtype=np.float32)
    assert allowed_share(logits, np.ones(4, dtype=bool)) == (pytest.approx(1.0, abs=1e-7), True)
    p = softmax(logits.astype(np.float64))
    one = np.array([False, False, True, False])
    share, top = allowed_share(logits, one)
    assert share == pytest.approx(p[2], rel=1e-6) and top is False


def test_logits_past_the_vocabulary_count_in_the_softmax() -> None:
    """Padding rows of a checkpoint's output layer hold probability too."""
    logits = np.zeros(6, dtype=np.float32)
    share, _ = allowed_share(logits, np.ones(4, dtype=bool))
    assert share == pytest.approx(4 / 6)


def test_the_summary_counts_refusals_and_places_the_first() -> None:
    meter = TollMeter()
    rows = [([5.0, 0.0, 0.0], [True, True, False]), ([0.0, 9.0, 0.0], [True, False, True]),
            ([0.0, 0.0, 1.0], [False, True, False])]
    for position, (logits, allowed) in enumerate(rows):
        meter.observe(np.array(logits, dtype=np.float32), np.array(allowed), position)
    toll = meter.record(char_of=lambda i: 10 * i)
    assert toll is not None
    assert (toll.steps, toll.refused_top, toll.first_refused_step, toll.first_refused_char) == (3, 2, 1, 10)
    shares = [allowed_share(np.array(lg, dtype=np.float32), np.array(al))[0] for lg, al in rows]
    assert toll.min_share == pytest.approx(min(shares), rel=1e-5)
    assert toll.mean_share == pytest.approx(sum(shares) / 3, rel=1e-5)
    assert toll.trace is None
    traced = meter.record(trace=True)
    assert traced is not None and traced.trace is not None
    assert traced.trace.top_allowed == [True, False, False] and traced.trace.tokens == [0, 1, 2]
    assert TollMeter().record() is None  # no masked step: no toll


class _AllowOnly(TokenMatcher):
    def __init__(self, allowed: list[int]) -> None:
        self.allowed = allowed

    def advance(self, tokens: list[int]) -> None:
        pass

    def fill_bitmask(self, bitmask: np.ndarray) -> None:
        for tok in self.allowed:
            bitmask[0, tok // 32] |= np.int32(1 << (tok % 32)) if tok % 32 < 31 else np.int32(-(2**31))


def test_the_mask_processor_measures_the_logits_it_is_handed() -> None:
    proc = MaskProcessor(_AllowOnly([1, 3]), prompt_tokens=2, stop_ids=frozenset({0}))
    logits = np.array([1.0, 2.0, 3.0, 0.0, -1.0], dtype=np.single)
    proc(np.array([9, 9], dtype=np.intc), logits.copy())
    proc(np.array([9, 9, 1], dtype=np.intc), logits.copy())
    toll = proc.toll.record()
    p = softmax(logits.astype(np.float64))
    assert toll is not None and toll.steps == 2 and toll.refused_top == 2
    assert toll.mean_share == pytest.approx(p[1] + p[3], rel=1e-5)
    assert proc.toll.tokens == [0, 1]


def test_a_record_without_a_toll_is_written_as_before() -> None:
    from conformbench.records.items import Condition
    from conformbench.records.prompt import Message, Prompt

    record = GenerationRecord(task="t", model="m", item_id="i", condition=Condition(arm="constrained"),
                              prompt=Prompt((Message("user", "q"),)))
    assert "mask_toll" not in record.model_dump_json()


def test_the_answer_part_holds_only_the_steps_after_the_stop_string() -> None:
    """think_then_constrain: free steps (share 1) then answer steps under the
    schema; the answer part's mean is theirs alone, its first refusal counted
    from its own first step, and a token straddling the stop string is the
    answer's. Output text: 'ab' + '</t>' + '{"x"' with one token per piece."""
    pieces = ["a", "b", "</", "t>{", '"x"', ""]  # the last: the end token
    starts = [sum(len(p) for p in pieces[:i]) for i in range(len(pieces) + 1)]
    meter = TollMeter()
    free, refused, kept = np.zeros(3, dtype=np.float32), [False, True, True], [True, True, True]
    for i in range(3):  # thinking: everything allowed
        meter.observe(free, np.ones(3, dtype=bool), i)
    meter.observe(np.array([4.0, 0.0, 0.0], dtype=np.float32), np.array(refused), 3)  # top refused
    meter.observe(np.array([4.0, 0.0, 0.0], dtype=np.float32), np.array(kept), 4)
    meter.observe(np.array([0.0, 0.0, 0.0], dtype=np.float32), np.array([True, False, False]), 5)
    char_of = lambda i: starts[min(i, len(pieces))]  # noqa: E731
    toll = meter.record(char_of, answer_start=len("ab</t>"))
    assert toll is not None and toll.answer is not None
    assert (toll.steps, toll.answer.steps) == (6, 3)
    shares = [allowed_share(np.array([4.0, 0.0, 0.0], dtype=np.float32), np.array(refused))[0], 1.0, 1 / 3]
    assert toll.answer.mean_share == pytest.approx(sum(shares) / 3, rel=1e-5)
    assert toll.mean_share == pytest.approx((3 + sum(shares)) / 6, rel=1e-5)
    assert toll.answer.mean_share < toll.mean_share  # the free steps diluted the whole call's mean
    assert toll.answer.min_share == toll.min_share == pytest.approx(min(shares), rel=1e-5)
    assert (toll.answer.first_refused_step, toll.answer.first_refused_char) == (0, len("ab</"))
    assert (toll.first_refused_step, toll.refused_top, toll.answer.refused_top) == (3, 1, 1)
    assert meter.record(char_of).answer is None  # type: ignore[union-attr]  # no stop string: no answer part
    never = meter.record(char_of, answer_start=100)  # the stop string's end past every step
    assert never is not None and never.answer is None
    old = MaskToll.model_validate_json('{"steps": 1, "mean_share": 1.0, "min_share": 1.0, "refused_top": 0}')
    assert old.answer is None  # a replay made before the answer part reads
    assert "answer" not in toll.model_copy(update={"answer": None}).model_dump_json()
