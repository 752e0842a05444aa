"""The statistics of ``engines cost``: percentiles, ratios with their
spread over repeats, and the arrival schedule (closed loop or Poisson)."""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from conformbench.percentiles import percentile

__all__ = ["Spread", "arrival_offsets", "percentile", "ratio", "spread"]


def ratio(on: float | None, off: float | None) -> float | None:
    """``on / off``, None where either is missing or ``off`` is not positive."""
    if on is None or off is None or off <= 0 or not (math.isfinite(on) and math.isfinite(off)):
        return None
    return on / off


@dataclass(frozen=True)
class Spread:
    """One value per repeat: their median and range."""

    median: float | None
    low: float | None
    high: float | None
    values: tuple[float, ...]


def spread(values: Sequence[float | None]) -> Spread:
    kept = tuple(v for v in values if v is not None)
    if not kept:
        return Spread(None, None, None, ())
    return Spread(statistics.median(kept), min(kept), max(kept), kept)


def arrival_offsets(n: int, rate: float | None, seed: int) -> list[float]:
    """When each of ``n`` requests may be sent, in seconds from the batch's
    start: all at once for a closed loop (``rate`` None: the concurrency
    alone paces them), else a Poisson process of ``rate`` requests per
    second (exponential gaps, seeded; the first at 0), as vLLM's serving
    benchmark draws them."""
    if rate is None:
        return [0.0] * n
    if not (math.isfinite(rate) and rate > 0):
        raise ValueError(f"rate must be a positive number of requests per second, not {rate}")
    rng = random.Random(seed)
    offsets, now = [], 0.0
    for i in range(n):
        if i:
            now += rng.expovariate(rate)
        offsets.append(now)
    return offsets
