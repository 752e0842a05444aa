"""The cells of docs/results.md's tables, as the tests that hold those
tables to their replays write them from a report.json: a rate with its 95%
interval, and a count with its share of N."""

from __future__ import annotations

from typing import Any

__all__ = ["delta", "rate", "share"]


def rate(metric: dict[str, Any] | None) -> str:
    """'36.0% [29.7, 42.9]': a report's rate and its 95% interval; 'n/a' for none."""
    if metric is None:
        return "n/a"
    lo, hi = metric["ci95"]
    return f"{100 * metric['rate']:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"


def share(count: int, n: int) -> str:
    """'8 (4.0%)': a count and its share of ``n``."""
    return f"{count} ({100 * count / n:.1f}%)" if n else str(count)


def delta(found: dict[str, Any]) -> str:
    """'-60.0 [-74.7, -40.1]': a paired difference in points, with its 95%
    interval, from a report comparison's delta."""
    lo, hi = found["ci95"]
    return f"{100 * found['delta']:+.1f} [{100 * lo:+.1f}, {100 * hi:+.1f}]"
