"""The exact power of the exact McNemar test, the smallest difference an N
detects and the items a difference needs: against a Monte Carlo of the test
itself and against the normal approximation where that one holds."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binomtest

from conformbench.scoring.intervals import mcnemar_exact
from conformbench.scoring.power import items_needed, mcnemar_power, min_detectable


def _simulated_power(n: int, psi: float, delta: float, reps: int = 4000) -> float:
    """Draw N paired items, run the exact test, count rejections."""
    rng = np.random.default_rng(11)
    cells = rng.multinomial(n, [(psi - delta) / 2, (psi + delta) / 2, 1 - psi], size=reps)
    return float(np.mean([mcnemar_exact(int(b), int(c)) < 0.05 for b, c, _ in cells]))


@pytest.mark.long
@pytest.mark.parametrize(("n", "psi", "delta"), [(20, 0.5, 0.3), (60, 0.2, 0.1), (200, 0.3, 0.08)])
def test_power_matches_a_simulation_of_the_test(n: int, psi: float, delta: float) -> None:
    assert mcnemar_power(n, psi, delta) == pytest.approx(_simulated_power(n, psi, delta), abs=0.025)


def test_four_items_can_detect_nothing() -> None:
    # the smallest exact p-value over 4 discordant pairs is 2/16
    assert binomtest(0, 4, 0.5).pvalue > 0.05
    assert mcnemar_power(4, 1.0, 1.0) == 0.0
    assert min_detectable(4, 1.0) is None
    assert mcnemar_power(6, 1.0, 1.0) == pytest.approx(1.0)


def test_min_detectable_is_where_power_reaches_80_percent() -> None:
    mdd = min_detectable(200, 0.36)
    assert mdd is not None and 0.05 < mdd < 0.2
    assert mcnemar_power(200, 0.36, mdd) >= 0.8 > mcnemar_power(200, 0.36, mdd - 0.01)


@pytest.mark.parametrize(("psi", "delta"), [(0.36, 0.1), (0.2, 0.05), (1.0, 0.1)])
def test_items_needed_near_the_normal_approximation(psi: float, delta: float) -> None:
    z_a, z_b = 1.959964, 0.841621
    connor = (z_a * math.sqrt(psi) + z_b * math.sqrt(psi - delta**2)) ** 2 / delta**2  # Connor 1987
    n = items_needed(psi, delta)
    assert n is not None and abs(n - connor) / connor < 0.1
    assert mcnemar_power(n, psi, delta) >= 0.8 > mcnemar_power(int(n * 0.9), psi, delta)


def test_discordance_is_never_below_the_difference() -> None:
    # no discordant pair seen: a 10-point difference still needs 10% of items to move
    assert items_needed(0.0, 0.1) == items_needed(0.1, 0.1)
    assert items_needed(0.3, 0.0) is None
