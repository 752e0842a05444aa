"""Interval estimates and paired tests: Wilson intervals for rates, paired
intervals for differences of rates (a vectorised paired bootstrap where it is
well-behaved, Newcombe's continuity-corrected hybrid score interval where it
is not) and the exact McNemar test.

Why two methods: a percentile bootstrap over a handful of items collapses to
a point (four items all flipping one way resample to +100 every time), while
Newcombe's interval (method 11 of Newcombe 1998, Stat. Med. 17:2635) keeps a
near-nominal, slightly conservative coverage at any N. Over many discordant
pairs the two agree and the bootstrap, which the shipped reports have always
used, is kept. tests/scoring/test_paired_coverage.py computes the coverage of
the rule as used, exactly, over a grid of true rates.

The single-proportion interval and the McNemar test are scipy's
(``scipy.stats.binomtest``). Newcombe's paired interval is not in scipy; the
continuity-corrected Wilson intervals it is built from are computed here,
vectorised over many tables at once (scipy's ``proportion_ci`` takes one
count at a time, and the exact coverage computation evaluates every table of
an N), and tests/scoring/test_intervals.py checks them against scipy's
``method="wilsoncc"``."""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
import numpy.typing as npt

__all__ = [
    "BOOTSTRAP_RESAMPLES",
    "BOOTSTRAP_SEED",
    "MCNEMAR_MIN_DISCORDANT",
    "MEAN_BOOTSTRAP_MIN_N",
    "PAIRED_BOOTSTRAP_MIN_DISCORDANT",
    "PAIRED_BOOTSTRAP_MIN_N",
    "exact_test_note",
    "item_share_interval",
    "mcnemar_exact",
    "newcombe_paired",
    "paired_bootstrap",
    "paired_item_interval",
    "paired_method",
    "resample_indices",
    "resample_weights",
    "wilson",
]

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 42
_Z95 = 1.959963984540054

#: the paired bootstrap is used only over at least this many items and this
#: many discordant pairs; below either, Newcombe's interval (see the module doc)
PAIRED_BOOTSTRAP_MIN_N = 100
PAIRED_BOOTSTRAP_MIN_DISCORDANT = 30
#: a mean that is not a share of items (macro-F1, attention shares) gets a
#: percentile-bootstrap interval only from this many items
MEAN_BOOTSTRAP_MIN_N = 30

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def wilson(k: float, n: int) -> tuple[float, float]:
    """95% Wilson score interval of k successes in n trials ((0, 0) when n = 0).
    ``k`` may be a sum of per-item shares (``item_share_interval``): scipy's
    binomtest takes whole counts only, so a fractional k uses the same
    closed form scipy computes (tests/scoring check the two agree)."""
    if n == 0:
        return (0.0, 0.0)
    if float(k).is_integer():
        from scipy.stats import binomtest  # imported on use: scipy.stats takes a second to import (issue #58)

        ci = binomtest(int(k), n).proportion_ci(confidence_level=0.95, method="wilson")
        return (max(0.0, float(ci.low)), min(1.0, float(ci.high)))
    p = k / n
    z2 = _Z95 * _Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = _Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def resample_indices(n: int, resamples: int = BOOTSTRAP_RESAMPLES,
                     seed: int = BOOTSTRAP_SEED) -> npt.NDArray[np.int64]:
    """The bootstrap's item indices, one row per resample."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, n, size=(resamples, n), dtype=np.int64)


def resample_weights(n: int, resamples: int = BOOTSTRAP_RESAMPLES,
                     seed: int = BOOTSTRAP_SEED) -> FloatArray:
    """How often each item is drawn in each resample, shape (resamples, n):
    one matrix product then gives every statistic's resampled means."""
    idx = resample_indices(n, resamples, seed)
    offsets = (np.arange(resamples, dtype=np.int64) * n)[:, None]
    counts = np.bincount((idx + offsets).ravel(), minlength=resamples * n)
    return counts.reshape(resamples, n).astype(np.float64)


def paired_bootstrap(diffs: FloatArray, weights: FloatArray) -> FloatArray:
    """95% percentile intervals of the mean of each row of ``diffs`` (shape
    (m, n): per-item paired differences of m statistics). Returns (m, 2)."""
    m, n = diffs.shape
    if m == 0 or n == 0:
        return np.zeros((m, 2))
    means = weights @ diffs.T / n  # (resamples, m)
    lo, hi = np.percentile(means, [2.5, 97.5], axis=0)
    return np.stack([lo, hi], axis=1)


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts b and c:
    the binomial test of b successes in b + c trials under p = 1/2."""
    n = b + c
    if n == 0:
        return 1.0
    from scipy.stats import binomtest

    return min(1.0, float(binomtest(b, n, 0.5).pvalue))


def _min_discordant_to_reject(alpha: float = 0.05) -> int:
    """The fewest discordant pairs with which the exact McNemar test can
    reject at ``alpha`` (all of them flipping one way): 6 at 0.05. All m
    pairs one way has the two-sided exact p-value 2 / 2^m (``mcnemar_exact(m,
    0)``, tests/scoring check the two agree), so importing this module needs
    no scipy."""
    m = 1
    while min(1.0, 2 * 0.5**m) >= alpha:
        m += 1
    return m


#: below this many discordant pairs no outcome reaches McNemar p < 0.05
MCNEMAR_MIN_DISCORDANT = _min_discordant_to_reject()


def exact_test_note(excludes_0: bool, discordant: tuple[int, int], p: float | None = None) -> str:
    """Why an interval that excludes 0 is still no detected effect (an effect
    "not established"): the exact test does not reject, and with few
    discordant pairs it cannot ('' when the interval includes 0, where the
    two agree). ``p``: the exact test's p-value, said when given."""
    if not excludes_0:
        return ""
    m = sum(discordant)
    if m < MCNEMAR_MIN_DISCORDANT:
        return (f"only {m} item(s) changed, and the exact test cannot reject with fewer than "
                f"{MCNEMAR_MIN_DISCORDANT}")
    return "the exact test does not reject" + (f": p={p:.3g}" if p is not None else "")


def paired_method(n: int, b: int, c: int) -> Literal["bootstrap", "newcombe"]:
    """Which interval a paired difference gets: "bootstrap" over many items
    and discordant pairs (b + c), "newcombe" otherwise."""
    if n >= PAIRED_BOOTSTRAP_MIN_N and b + c >= PAIRED_BOOTSTRAP_MIN_DISCORDANT:
        return "bootstrap"
    return "newcombe"


def _wilson_cc(k: IntArray | FloatArray, n: int) -> tuple[FloatArray, FloatArray]:
    """95% Wilson score intervals with continuity correction (Newcombe 1998,
    method 4 of his single-proportion paper), vectorised over k."""
    p = k / n
    z2 = _Z95 * _Z95
    root_lo = np.sqrt(np.maximum(0.0, z2 - 2 - 1 / n + 4 * p * (n * (1 - p) + 1)))
    root_hi = np.sqrt(np.maximum(0.0, z2 + 2 - 1 / n + 4 * p * (n * (1 - p) - 1)))
    lo = (2 * n * p + z2 - 1 - _Z95 * root_lo) / (2 * (n + z2))
    hi = (2 * n * p + z2 + 1 + _Z95 * root_hi) / (2 * (n + z2))
    return np.where(k == 0, 0.0, np.maximum(0.0, lo)), np.where(k == n, 1.0, np.minimum(1.0, hi))


def newcombe_paired(a: IntArray | FloatArray, b: IntArray | FloatArray, c: IntArray | FloatArray,
                    d: IntArray | FloatArray) -> tuple[FloatArray, FloatArray]:
    """95% interval of p_to - p_from from paired 2x2 counts (a: yes/yes,
    b: yes/no, c: no/yes, d: no/no, "from" first): Newcombe's hybrid score
    interval with continuity correction, vectorised over tables of one N."""
    # float counts: per-item shares (paired_item_interval) give fractional tables
    a, b, c, d = (np.asarray(x, dtype=np.float64) for x in (a, b, c, d))
    n = round(float((a + b + c + d).flat[0]))
    p1, p2 = (a + b) / n, (a + c) / n
    l1, u1 = _wilson_cc(a + b, n)
    l2, u2 = _wilson_cc(a + c, n)
    den = np.sqrt((a + b) * (c + d) * (a + c) * (b + d))
    num = a * d - b * c
    # the corrected correlation: shrink a positive ad - bc by n/2
    num = np.where(num > 0, np.maximum(num - n / 2, 0.0), num)
    phi = np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)
    theta = p2 - p1
    lo = theta - np.sqrt(np.maximum(0.0, (p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2))
    hi = theta + np.sqrt(np.maximum(0.0, (u2 - p2) ** 2 - 2 * phi * (u2 - p2) * (p1 - l1) + (p1 - l1) ** 2))
    return np.maximum(-1.0, lo), np.minimum(1.0, hi)


# -- intervals of per-item shares: every ConCodeEval section, one code path --
# (a verdict per item is a share of 0 or 1; an item's share over its K
# samples or over its output formats lies between). Kept together so the
# sections never grow intervals of their own.


def item_share_interval(shares: FloatArray) -> tuple[float, float]:
    """95% interval of the mean of per-item shares in [0, 1]: the arms
    job's Wilson interval with the items as the trials. For yes/no items it
    is exactly ``wilson(k, n)``; for fractional shares it is conservative
    (a share in [0, 1] with mean p varies at most as a yes/no does), so it
    never claims more than N items support, and never has zero width."""
    n = int(shares.size)
    return wilson(float(shares.sum()), n)


def paired_item_interval(before: FloatArray, after: FloatArray
                         ) -> tuple[tuple[float, float], Literal["bootstrap", "newcombe"]]:
    """95% interval of mean(after - before) over paired per-item shares in
    [0, 1], by the rule every comparison uses (``paired_method``): the paired
    bootstrap over many items and discordant pairs, Newcombe's interval
    otherwise. For yes/no items the 2x2 table is the usual one; for
    fractional shares each item adds its overlap to yes/yes, its drop to
    yes/no and its rise to no/yes."""
    n = int(before.size)
    if n == 0:
        return (0.0, 0.0), "newcombe"
    drop, rise = np.maximum(before - after, 0.0), np.maximum(after - before, 0.0)
    both = np.minimum(before, after)
    b, c, a = float(drop.sum()), float(rise.sum()), float(both.sum())
    if paired_method(n, math.ceil(b), math.ceil(c)) == "bootstrap":
        lo, hi = paired_bootstrap((after - before).reshape(1, n), resample_weights(n))[0]
        return (float(lo), float(hi)), "bootstrap"
    low, high = newcombe_paired(*(np.array([x]) for x in (a, b, c, n - a - b - c)))
    return (float(low[0]), float(high[0])), "newcombe"
