"""engines cost's statistics: percentiles, ratios, spreads and the arrival schedule."""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest

from conformbench.serving.stats import arrival_offsets, percentile, ratio, spread


@pytest.mark.parametrize("n", [1, 2, 3, 10, 101])
@pytest.mark.parametrize("q", [0, 50, 90, 99, 100])
def test_percentile_interpolates_as_numpy(n: int, q: float) -> None:
    values = [random.Random(n).uniform(0, 100) for _ in range(n)]
    assert percentile(values, q) == pytest.approx(float(np.percentile(values, q)))


def test_percentile_of_known_values() -> None:
    assert percentile([4.0, 1.0, 3.0, 2.0], 50) == 2.5  # unsorted input, between the middle two
    assert percentile([10.0, 20.0], 90) == pytest.approx(19.0)
    assert percentile([], 50) is None
    with pytest.raises(ValueError):
        percentile([1.0], 101)


def test_ratio_is_on_over_off_and_refuses_what_is_no_ratio() -> None:
    assert ratio(3.06, 4.32) == pytest.approx(0.7083, abs=1e-4)  # vLLM PR 10835's req/s with and without
    assert ratio(None, 1.0) is None and ratio(1.0, None) is None
    assert ratio(1.0, 0.0) is None and ratio(1.0, math.inf) is None


def test_spread_is_median_and_range_of_the_values_given() -> None:
    s = spread([1.3, None, 1.1, 1.2])
    assert (s.median, s.low, s.high, s.values) == (1.2, 1.1, 1.3, (1.3, 1.1, 1.2))
    assert spread([None]).median is None


def test_closed_loop_sends_everything_at_once() -> None:
    assert arrival_offsets(5, None, 0) == [0.0] * 5


def test_poisson_arrivals_are_seeded_and_exponential() -> None:
    rate, n = 4.0, 20_000
    offsets = arrival_offsets(n, rate, seed=7)
    assert offsets == arrival_offsets(n, rate, seed=7)
    assert offsets != arrival_offsets(n, rate, seed=8)
    gaps = [b - a for a, b in itertools.pairwise(offsets)]
    assert offsets[0] == 0.0 and min(gaps) >= 0
    assert sum(gaps) / len(gaps) == pytest.approx(1 / rate, rel=0.03)
    # exponential: P(gap < mean) = 1 - 1/e, about 0.632 (a uniform or fixed gap would miss it)
    below = sum(g < 1 / rate for g in gaps) / len(gaps)
    assert below == pytest.approx(1 - math.exp(-1), abs=0.015)


@pytest.mark.parametrize("rate", [0.0, -1.0, math.nan, math.inf])
def test_a_rate_that_is_no_rate_is_refused(rate: float) -> None:
    with pytest.raises(ValueError):
        arrival_offsets(3, rate, 0)
