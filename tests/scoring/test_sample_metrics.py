"""Metrics over samples: the unbiased pass@k and all@k, per-item agreement,
intervals that resample items (not samples), the paired grammar
comparison over samples, and the section only where K > 1."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conformbench.records.items import Condition, Item, ItemScore
from conformbench.scoring.sample_metrics import all_at_k, pass_at_k, sample_count, sampling_data
from conformbench.scoring.sample_section import SamplingSection
from conformbench.scoring.table import ScoredGeneration, ScoredTable

PROMPT = Condition("prompt_only", "answer")
GRAMMAR = Condition("constrained", "answer", "llguidance")


def _table(verdicts: dict[Condition, list[list[bool]]]) -> ScoredTable:
    """verdicts[cond][item][sample]: validity and accuracy alike."""
    rows, extra = [], []
    n = len(next(iter(verdicts.values())))
    items = [Item(id=f"i{i}", input={}) for i in range(n)]
    for cond, per_item in verdicts.items():
        for item, samples in zip(items, per_item, strict=True):
            for s, ok in enumerate(samples):
                row = ScoredGeneration(item=item, condition=cond, score=ItemScore(valid=ok, correct=ok),
                                       finish_reason="stop", sample=s)
                (extra if s else rows).append(row)
    return ScoredTable("t", "m", tuple(i.id for i in items), tuple(verdicts), tuple(rows),
                       extra_samples=tuple(extra))


def test_pass_and_all_at_k_are_the_unbiased_estimators() -> None:
    passed = np.array([0, 1, 2, 3], dtype=np.int64)
    assert pass_at_k(1, passed, 3).tolist() == pytest.approx([0, 1 / 3, 2 / 3, 1])
    assert pass_at_k(2, passed, 3).tolist() == pytest.approx([0, 2 / 3, 1, 1])
    assert pass_at_k(3, passed, 3).tolist() == pytest.approx([0, 1, 1, 1])
    assert all_at_k(2, passed, 3).tolist() == pytest.approx([0, 0, 1 / 3, 1])
    assert all_at_k(3, passed, 3).tolist() == pytest.approx([0, 0, 0, 1])
    # against brute force: every k-subset of 5 samples with 2 passing
    from itertools import combinations
    samples = [True, True, False, False, False]
    subsets = list(combinations(samples, 2))
    assert pass_at_k(2, np.array([2]), 5)[0] == pytest.approx(sum(any(s) for s in subsets) / len(subsets))
    assert all_at_k(2, np.array([2]), 5)[0] == pytest.approx(sum(all(s) for s in subsets) / len(subsets))


def test_sampled_metrics_of_a_condition() -> None:
    table = _table({PROMPT: [[True, False, False], [True, True, True], [False, False, False],
                             [False, True, True]]})
    assert sample_count(table) == 3
    data = sampling_data(table)
    (cond,) = data.conditions
    assert cond.n == 4 and [m.metric for m in cond.metrics] == ["validity", "accuracy"]
    m = cond.metrics[0]
    assert m.mean.rate == pytest.approx(6 / 12)
    assert [r.rate for r in m.pass_at] == pytest.approx([0.5, (2 / 3 + 1 + 0 + 1) / 4, 3 / 4])
    assert [r.rate for r in m.all_at] == pytest.approx([0.5, (0 + 1 + 0 + 1 / 3) / 4, 1 / 4])
    assert m.agreement.rate == pytest.approx(2 / 4)  # all-true and all-false items
    assert m.pairwise_agreement == pytest.approx((1 / 3 + 1 + 1 + 1 / 3) / 4)
    lo, hi = m.mean.ci95
    assert lo <= m.mean.rate <= hi


def test_the_interval_resamples_items_with_all_their_samples() -> None:
    """Items that are each all-pass or all-fail: a bootstrap over 40 x 5
    independent samples would be about sqrt(5) times narrower."""
    table = _table({PROMPT: [[i % 2 == 0] * 5 for i in range(40)]})
    lo, hi = sampling_data(table).conditions[0].metrics[0].mean.ci95
    item_se = math.sqrt(0.25 / 40)
    assert hi - lo == pytest.approx(2 * 1.96 * item_se, rel=0.2)


def test_paired_grammar_comparison_over_samples() -> None:
    table = _table({PROMPT: [[False, False, True], [False, False, False]],
                    GRAMMAR: [[True, True, True], [True, False, True]]})
    deltas = {d.metric: d for d in sampling_data(table).comparisons}
    assert set(deltas) == {"validity", "accuracy"}
    d = deltas["validity"]
    assert (d.from_key, d.to_key, d.n) == (PROMPT.key, GRAMMAR.key, 2)
    assert d.delta == pytest.approx(((1 - 1 / 3) + (2 / 3 - 0)) / 2)


def test_an_item_missing_a_sample_is_left_out_of_the_sampled_numbers() -> None:
    table = _table({PROMPT: [[True, True], [False, True]]})
    table = ScoredTable(table.task, table.model, table.item_ids, table.conditions, table.rows,
                        extra_samples=table.extra_samples[:1])
    assert sampling_data(table).conditions[0].n == 1


def test_the_section_only_where_there_are_samples() -> None:
    section = SamplingSection()
    assert section.compute(_table({PROMPT: [[True], [False]]})) is None
    data = section.compute(_table({PROMPT: [[True, False], [False, False]],
                                   GRAMMAR: [[True, True], [True, False]]}))
    assert data is not None
    text = section.markdown(data)
    assert "pass@2" in text and "all@2" in text and "all 2 agree" in text
    assert "prompt_only[answer] → constrained[answer]@llguidance, validity: +50.0 pts" in text
    # two items: Newcombe's interval (the rule of every comparison), never a zero-width bootstrap
    assert "(Newcombe; no detectable effect at N=2)" in text
    lines = section.terminal(data)
    assert lines[0].startswith("sampling: 2 samples")
    assert any("pass@2 50.0%" in line for line in lines)
    assert "<table>" in section.html(data)
    assert section.load(data.model_dump(mode="json")) == data


def test_how_an_interval_over_items_is_read() -> None:
    from conformbench.scoring.sample_section import reading

    assert reading(2, -0.2, 0.9, "newcombe") == "Newcombe; no detectable effect at N=2"
    assert reading(140, 0.1, 0.3, "bootstrap") == "paired bootstrap; excludes 0"
    assert reading(140, -0.1, 0.3, "bootstrap") == "paired bootstrap; no detectable effect at N=140"


def test_no_interval_of_a_share_has_zero_width_at_small_n() -> None:
    """Two items whose samples all fail: the mean is 0 of 2 items, whose
    Wilson interval is [0, 65.8], not the collapsed bootstrap's [0, 0]."""
    data = SamplingSection().compute(_table({PROMPT: [[False, False], [False, False]],
                                             GRAMMAR: [[False, False], [False, False]]}))
    assert data is not None
    for cond in data.conditions:
        for m in cond.metrics:
            for rate in (m.mean, m.agreement, *m.pass_at, *m.all_at):
                assert rate.ci95[1] - rate.ci95[0] > 0.3, (cond.key, m.metric, rate)
    assert all(d.ci95[1] - d.ci95[0] > 0.3 for d in data.comparisons)
