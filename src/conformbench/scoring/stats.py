"""Interval estimates and paired tests: Wilson intervals for rates, a
vectorised paired bootstrap for differences, and the exact McNemar test."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import numpy.typing as npt

__all__ = [
    "BOOTSTRAP_RESAMPLES",
    "BOOTSTRAP_SEED",
    "mcnemar_exact",
    "paired_bootstrap",
    "resample_indices",
    "resample_weights",
    "wilson",
]

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 42
_Z95 = 1.959963984540054

FloatArray = npt.NDArray[np.float64]


def wilson(k: int, n: int) -> tuple[float, float]:
    """95% Wilson score interval of k successes in n trials."""
    if n == 0:
        return (0.0, 0.0)
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
    """Two-sided exact McNemar p-value from the discordant counts b and c
    (a binomial test of min(b, c) under p = 1/2), computed exactly."""
    n = b + c
    if n == 0:
        return 1.0
    tail = sum((math.comb(n, i) for i in range(min(b, c) + 1)), 0)
    p = Fraction(2 * tail, 2**n)
    return float(min(Fraction(1), p))
