"""The N a paired question needs: the exact power of the two-sided exact
McNemar test at alpha = 0.05, the smallest difference an N detects with 80%
power, and the items a named difference needs.

The power is exact, not a normal approximation: the number of discordant
items m is Binomial(N, psi) (psi: the share of items whose outcome differs
between the two conditions), and given m the items that moved up are
Binomial(m, (psi + delta) / (2 psi)); the test rejects where its exact
p-value is below alpha. psi is the observed discordance, but never below
the difference asked about (a difference of delta needs at least that share
of items to move). At small N the normal approximation (Connor 1987) claims
power the exact test cannot have (four items never reach p < 0.05).
"""

from __future__ import annotations

import numpy as np

__all__ = ["ALPHA", "POWER", "items_needed", "mcnemar_power", "min_detectable"]

ALPHA = 0.05
POWER = 0.80
#: items_needed gives up above this N (the answer is then "more than")
MAX_ITEMS = 1_000_000


def mcnemar_power(n: int, psi: float, delta: float) -> float:
    """Power of the exact two-sided McNemar test over n paired items whose
    discordance is psi and true difference delta (|delta| <= psi)."""
    delta = abs(delta)
    if n <= 0 or psi <= 0 or delta <= 0:
        return 0.0
    psi = min(1.0, max(psi, delta))
    from scipy.stats import binom  # imported on use: scipy.stats takes a second to import (issue #58)

    m = np.arange(n + 1)
    # reject when min(k, m - k) <= crit: 2 * P(K <= crit | p = 1/2) < alpha
    crit = binom.ppf(ALPHA / 2, m, 0.5) - 1
    up = (psi + delta) / (2 * psi)
    given_m = np.where(crit >= 0, binom.cdf(crit, m, up) + binom.sf(m - crit - 1, m, up), 0.0)
    return float(binom.pmf(m, n, psi) @ given_m)


def min_detectable(n: int, psi: float, power: float = POWER) -> float | None:
    """The smallest difference n items detect with ``power`` at the observed
    discordance psi (never below the difference itself); None when even a
    difference of 1 (every item moving one way) would not be."""
    if mcnemar_power(n, max(psi, 1.0), 1.0) < power:
        return None
    lo, hi = 0.0, 1.0
    for _ in range(30):
        mid = (lo + hi) / 2
        if mcnemar_power(n, max(psi, mid), mid) >= power:
            hi = mid
        else:
            lo = mid
    return hi


def items_needed(psi: float, delta: float, power: float = POWER) -> int | None:
    """The fewest items (doubling, then bisection) at which the exact test
    detects ``delta`` with ``power`` at discordance psi; None past MAX_ITEMS."""
    delta = abs(delta)
    if delta <= 0:
        return None
    psi = max(psi, delta)
    hi = 1
    while mcnemar_power(hi, psi, delta) < power:
        hi *= 2
        if hi > MAX_ITEMS:
            return None
    lo = hi // 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if mcnemar_power(mid, psi, delta) >= power:
            hi = mid
        else:
            lo = mid
    return hi
