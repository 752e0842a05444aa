"""One percentile, one definition (issue #61): ``engines check`` and
``engines cost`` read their p50/p95/p99 with ``conformbench.percentiles``
(linear interpolation, numpy's default)."""

from __future__ import annotations

import numpy as np
import pytest

from conformbench.audits.engine_check.summary import timing
from conformbench.percentiles import percentile
from conformbench.serving import stats


@pytest.mark.parametrize("q", [0, 50, 95, 99, 100])
def test_it_interpolates_as_numpy(q: float) -> None:
    values = [3.0, 1.0, 4.0, 1.5, 9.0, 2.6, 5.0]
    assert percentile(values, q) == pytest.approx(float(np.percentile(values, q)))


def test_engines_check_and_engines_cost_read_the_same_percentile() -> None:
    seconds = [0.001, 0.002, 0.003, 0.004]
    # nearest rank gave 2 ms for the median of four; linear interpolation gives 2.5 ms
    assert timing(seconds).p50_ms == pytest.approx(2.5)
    assert stats.percentile is percentile

