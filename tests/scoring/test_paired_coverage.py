"""The coverage of the paired-difference interval as scoring uses it
(``paired_method`` picking the bootstrap or Newcombe's interval), computed
exactly: every 2x2 table of N paired items is weighted by its multinomial
probability under a true (from, to, correlation) and the intervals that
contain the true difference are summed. 95% nominal must give at least 93%
at every point of the grid, at N = 10, 30 and 200; the bootstrap alone, the
old method, does not at N = 10 (so the test can fail)."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
import pytest
from scipy.special import gammaln

from conformbench.scoring.intervals import (
    newcombe_paired,
    paired_bootstrap,
    paired_method,
    resample_weights,
)

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


def _grid() -> list[tuple[float, float, float]]:
    """True cell probabilities (yes/yes, yes/no, no/yes) of a grid of from
    and to rates (null differences included) and correlations 0 and 0.5."""
    out = []
    for p1 in (0.05, 0.2, 0.5, 0.8):
        for p2 in (0.05, 0.2, 0.5, 0.8, 0.95):
            for rho in (0.0, 0.5):
                pa = p1 * p2 + rho * math.sqrt(p1 * (1 - p1) * p2 * (1 - p2))
                cells = (pa, p1 - pa, p2 - pa, 1 - p1 - p2 + pa)
                if min(cells) > 0:
                    out.append(cells[:3])
    return out


GRID = _grid()


def _log_pmf(counts: list[Ints], probs: tuple[float, ...], n: int) -> Floats:
    lg = gammaln(n + 1) - sum(gammaln(k + 1) for k in counts)
    return np.asarray(lg + sum(k * math.log(p) for k, p in zip(counts, probs)), dtype=np.float64)


def _bc(n: int) -> tuple[Ints, Ints]:
    b, c = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    mask = b + c <= n
    return b[mask], c[mask]


def _bootstrap_part(n: int, b: Ints, c: Ints, boot_all: bool) -> Floats:
    """Coverage contributed by tables the bootstrap covers, per grid point.
    The bootstrap depends on the discordant items alone: (b, c) with the
    items in a fixed order (the weights are exchangeable draws)."""
    use = np.array([boot_all or paired_method(n, int(x), int(y)) == "bootstrap" for x, y in zip(b, c)])
    b, c = b[use], c[use]
    out = np.zeros(len(GRID))
    if b.size == 0:
        return out
    probs = np.array([np.exp(_log_pmf([b, c, n - b - c], (pb, pc, 1 - pb - pc), n)) for _, pb, pc in GRID])
    live = probs.max(axis=0) > 1e-13  # skip tables no grid point can produce
    b, c, probs = b[live], c[live], probs[:, live]
    cols = np.arange(n)
    diffs = np.where(cols < c[:, None], 1.0, np.where(cols < (b + c)[:, None], -1.0, 0.0))
    ci = paired_bootstrap(diffs, resample_weights(n))
    for g, (_, pb, pc) in enumerate(GRID):
        theta = pc - pb
        out[g] = probs[g] @ ((ci[:, 0] <= theta + 1e-12) & (theta <= ci[:, 1] + 1e-12))
    return out


def _newcombe_part(n: int, b: Ints, c: Ints) -> Floats:
    use = np.array([paired_method(n, int(x), int(y)) == "newcombe" for x, y in zip(b, c)])
    b, c = b[use], c[use]
    rest = n - b - c
    a = np.concatenate([np.arange(r + 1) for r in rest])
    b, c = np.repeat(b, rest + 1), np.repeat(c, rest + 1)
    d = n - a - b - c
    lo, hi = newcombe_paired(a, b, c, d)
    out = np.zeros(len(GRID))
    for g, (pa, pb, pc) in enumerate(GRID):
        theta = pc - pb
        prob = np.exp(_log_pmf([a, b, c, d], (pa, pb, pc, 1 - pa - pb - pc), n))
        out[g] = prob @ ((lo <= theta + 1e-12) & (theta <= hi + 1e-12))
    return out


def coverage(n: int) -> Floats:
    b, c = _bc(n)
    return _bootstrap_part(n, b, c, boot_all=False) + _newcombe_part(n, b, c)


@pytest.mark.long
@pytest.mark.parametrize("n", [10, 30, 200])
def test_paired_interval_covers_at_least_93_percent(n: int) -> None:
    got = coverage(n)
    assert got.min() >= 0.93, (n, got.round(4).tolist())
    # and not by being uselessly wide
    assert got.mean() < 0.99, (n, got.mean())


def test_both_methods_are_exercised_at_200() -> None:
    assert paired_method(200, 0, 72) == "bootstrap"
    assert paired_method(200, 0, 7) == "newcombe"
    assert paired_method(30, 10, 20) == "newcombe"


def test_the_bootstrap_alone_undercovers_at_10() -> None:
    """The old method: percentile bootstrap at every N."""
    b, c = _bc(10)
    assert _bootstrap_part(10, b, c, boot_all=True).min() < 0.93


def test_newcombe_never_collapses_on_a_handful_of_items() -> None:
    """Four items all flipping one way: the bootstrap gave [+100, +100]."""
    lo, hi = newcombe_paired(np.array([0]), np.array([0]), np.array([4]), np.array([0]))
    assert hi[0] - lo[0] > 0.5 and lo[0] < 1.0 == hi[0]
    lo, hi = newcombe_paired(np.array([0]), np.array([0]), np.array([0]), np.array([4]))
    assert lo[0] < 0 < hi[0]
