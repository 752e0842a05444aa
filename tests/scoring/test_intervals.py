"""Wilson intervals, the exact McNemar test and the vectorised paired
bootstrap against slow references."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest

from conformbench.scoring.intervals import (
    MCNEMAR_MIN_DISCORDANT,
    _wilson_cc,
    exact_test_note,
    mcnemar_exact,
    paired_bootstrap,
    resample_indices,
    resample_weights,
    wilson,
)


def test_wilson_known_values() -> None:
    assert wilson(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    assert wilson(0, 20) == pytest.approx((0.0, 0.1611), abs=1e-4)
    assert wilson(20, 20) == pytest.approx((0.8389, 1.0), abs=1e-4)
    assert wilson(0, 0) == (0.0, 0.0)


@pytest.mark.parametrize(
    ("b", "c", "p"),
    [(0, 0, 1.0), (1, 5, 14 / 64), (5, 1, 14 / 64), (0, 10, 2 / 1024), (3, 3, 1.0),
     (2, 12, 2 * (1 + 14 + 91) / 2**14)],
)
def test_mcnemar_exact_known_values(b: int, c: int, p: float) -> None:
    assert mcnemar_exact(b, c) == pytest.approx(p, rel=1e-12)


def test_the_vectorised_continuity_corrected_wilson_matches_scipy() -> None:
    """Newcombe's paired interval is built from these; scipy computes one
    count at a time, the module all counts of an N at once."""
    for n in (1, 2, 7, 30, 101):
        k = np.arange(n + 1)
        lo, hi = _wilson_cc(k, n)
        for i in range(n + 1):
            ci = binomtest(i, n).proportion_ci(confidence_level=0.95, method="wilsoncc")
            assert (lo[i], hi[i]) == pytest.approx((max(0.0, ci.low), min(1.0, ci.high)), abs=1e-12)


def _slow_bootstrap(diff: np.ndarray, resamples: int, seed: int) -> tuple[float, float]:
    """One resample at a time, straight from the definition."""
    idx = resample_indices(diff.size, resamples, seed)
    means = [float(np.mean([diff[j] for j in row])) for row in idx]
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(lo), float(hi)


def test_vectorised_bootstrap_matches_the_slow_reference() -> None:
    rng = np.random.default_rng(7)
    a = rng.random(30) < 0.4
    b = rng.random(30) < 0.7
    c = rng.random(30) < 0.5
    diffs = np.stack([b.astype(float) - a, c.astype(float) - a, np.zeros(30)])
    fast = paired_bootstrap(diffs, resample_weights(30, 500, 42))
    for row, got in zip(diffs, fast):
        assert tuple(got) == pytest.approx(_slow_bootstrap(row, 500, 42), abs=1e-12)
    assert tuple(fast[2]) == (0.0, 0.0)


def test_weights_count_each_draw_and_are_seeded() -> None:
    w = resample_weights(12, 100, 42)
    assert w.shape == (100, 12) and (w.sum(axis=1) == 12).all()
    assert np.array_equal(w, resample_weights(12, 100, 42))
    assert not np.array_equal(w, resample_weights(12, 100, 43))
    assert paired_bootstrap(np.zeros((0, 5)), resample_weights(5)).shape == (0, 2)


def test_the_fewest_discordant_pairs_that_can_reject_is_6() -> None:
    assert MCNEMAR_MIN_DISCORDANT == 6
    # the closed form the constant uses is the exact test's own p-value
    assert mcnemar_exact(5, 0) >= 0.05 > mcnemar_exact(6, 0)
    assert mcnemar_exact(6, 0) == pytest.approx(2 * 0.5**6, rel=1e-12)
    assert binomtest(0, 5, 0.5).pvalue >= 0.05 > binomtest(0, 6, 0.5).pvalue


def test_exact_test_note_names_the_reason() -> None:
    assert exact_test_note(False, (0, 4)) == ""
    assert exact_test_note(True, (0, 4)) == ("only 4 item(s) changed, and the exact test cannot reject with "
                                             "fewer than 6")
    assert exact_test_note(True, (2, 9)) == "the exact test does not reject"
    assert exact_test_note(True, (2, 9), 0.0654) == "the exact test does not reject: p=0.0654"
