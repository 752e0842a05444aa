"""``engines cost --fail-if`` (serving/fail_if.py): a comparison whose
value is n/a (no repeat measured it both ways, no answer to validate) makes
the gate not evaluable, exit 2; it used to be skipped and the gate passed."""

from __future__ import annotations

import pytest

from conformbench.errors import GateNotEvaluableError
from conformbench.records.results import Rate
from conformbench.serving.fail_if import check_cost_gates, parse_cost_gate
from conformbench.serving.report import Comparison, CostReport, Pairs, RatioSpread

_NONE = RatioSpread(median=None, low=None, high=None, per_repeat=[])


def _ratio(x: float) -> RatioSpread:
    return RatioSpread(median=x, low=x, high=x, per_repeat=[x])


def _comparison(concurrency: int, tpot: RatioSpread, answered_on: int) -> Comparison:
    rate = Rate(k=answered_on, n=answered_on, rate=1.0 if answered_on else 0.0, ci95=(0.0, 1.0))
    return Comparison(concurrency=concurrency, arm="json", cache="warm", throughput_ratio=_ratio(0.9),
                      tok_s_ratio=_ratio(0.9), ttft_ratio=_ratio(1.1), tpot_ratio=tpot, validity_on=rate,
                      validity_off=Rate(k=2, n=4, rate=0.5, ci95=(0.15, 0.85)),
                      pairs=Pairs(both_valid=0, only_on_valid=0, only_off_valid=0, neither=0))


REPORT = CostReport(settings={}, server={}, arms=[], complete=True,
                    comparisons=[_comparison(1, _ratio(1.5), 4), _comparison(16, _NONE, 0)])


def test_a_ratio_n_a_for_a_matched_comparison_is_not_evaluable() -> None:
    with pytest.raises(GateNotEvaluableError) as refused:
        check_cost_gates([parse_cost_gate("tpot_ratio > 9")], REPORT)
    assert str(refused.value) == (
        "--fail-if 'tpot_ratio > 9' cannot be evaluated: tpot_ratio is n/a for 1 of the 2 comparisons it matches "
        "(c16/warm: no repeat measured it both with and without the grammar); leave them out of [GLOB] or "
        "measure again")
    with pytest.raises(GateNotEvaluableError, match=r"validity_on is n/a for 1 of the 1 .*no answer with the grammar"):
        check_cost_gates([parse_cost_gate("validity_on[c16/*] < 0.5")], REPORT)


def test_known_values_still_gate() -> None:
    checks = check_cost_gates([parse_cost_gate("tpot_ratio[c1/*] > 1.2"), parse_cost_gate("validity_off < 0.4")],
                              REPORT)
    assert [(c.label, c.value, c.tripped) for c in checks] == [
        ("c1/warm", 1.5, True), ("c1/warm", 0.5, False), ("c16/warm", 0.5, False)]
