"""The cost section's chart of accuracy against calls."""

from __future__ import annotations

from conformbench.records.results import Rate
from conformbench.scoring.cost import ArmCost
from conformbench.scoring.cost_section import cost_chart, label_lifts


def test_the_chart_draws_a_rate_whose_interval_end_rounds_past_it() -> None:
    """Wilson's lower bound of 0 of 12 came out as 2.8e-17 on a real run:
    a negative error bar made matplotlib refuse the whole report."""
    zero = Rate(k=0, n=12, rate=0.0, ci95=(2.7755575615628914e-17, 0.2425))
    arm = ArmCost(key="repair[answer]", n=12, calls=3.0, calls_ci95=(3.0000000000000004, 3.0), rounds=3.0,
                  prompt_tokens=1.0, completion_tokens=1.0, seconds=1.0, shared_calls=12, valid=0, right=0,
                  calls_per_valid=None, calls_per_right=None, tokens_per_valid=None, tokens_per_right=None,
                  seconds_per_valid=None, seconds_per_right=None, accuracy=zero, by_round=[])
    assert cost_chart([arm]).startswith('<img alt="accuracy against model calls per arm"')


def test_labels_of_arms_at_one_point_are_a_line_apart() -> None:
    """Issue #48: two arms at (1.00, 0) had their labels drawn over each other."""
    assert label_lifts([(1.0, 0.0), (1.0, 0.0), (2.4, 50.0), (1.05, 1.0)]) == [4, 13, 4, 22]
