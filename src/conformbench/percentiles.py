"""The one percentile of conformbench: ``engines check``'s compile and mask
times and ``engines cost``'s TTFT, TPOT and latencies are all read with it,
so a p95 means one thing in every report.

Linear interpolation between the closest ranks: numpy's default
(``method="linear"``), and what vLLM's serving benchmark reports. (Until
issue #61, ``engines check`` used the nearest rank; BENCHMARKS.md says which
published numbers that touches.)"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["percentile"]


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile (0..100) of ``values`` by linear interpolation
    between the closest ranks; None for no values."""
    if not 0 <= q <= 100:
        raise ValueError(f"percentile {q} is outside 0..100")
    ordered = sorted(values)
    if not ordered:
        return None
    rank = (len(ordered) - 1) * q / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)
