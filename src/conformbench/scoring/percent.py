"""How a share is written, one function per meaning, so that every report
writes the same share the same way (the terminal, Markdown and HTML
reports, the sections, ``score --against``, ``reproduce``).

- ``pct(0.42)`` = ``"42.0%"``: a share standing alone, with its sign;
- ``pct_bare(0.42)`` = ``"42.0"``: a share in a column or sentence whose
  heading already says ``%``, and an interval's bounds;
- ``pts(0.042)`` = ``"+4.2"``: a difference of two shares in percentage
  points (its unit, ``pts``, is written by the caller);
- ``rate_ci(0.42, (0.40, 0.44))`` = ``"42.0% [40.0, 44.0]"``: a share with
  its 95% interval.
"""

from __future__ import annotations

__all__ = ["pct", "pct_bare", "pts", "rate_ci"]


def pct_bare(x: float) -> str:
    """``0.42`` -> ``"42.0"``: a share as a percentage, without the sign."""
    return f"{100 * x:.1f}"


def pct(x: float) -> str:
    """``0.42`` -> ``"42.0%"``."""
    return pct_bare(x) + "%"


def pts(x: float) -> str:
    """``0.042`` -> ``"+4.2"``: a difference in percentage points, always signed."""
    return f"{100 * x:+.1f}"


def rate_ci(rate: float, ci95: tuple[float, float]) -> str:
    """``"42.0% [40.0, 44.0]"``: a share and its interval."""
    lo, hi = ci95
    return f"{pct(rate)} [{pct_bare(lo)}, {pct_bare(hi)}]"
