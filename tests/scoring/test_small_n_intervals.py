"""No report section prints an interval of zero width for a proportion from
a handful of items (issue #41): at N = 4 Val Acc 0.0 was printed [0.0, 0.0]
beside the conditions table's [0.0, 49.0], the RQ2 trade-off +0.0 [+0.0,
+0.0]. Every section now takes its interval from one place
(``intervals.item_share_interval``, ``intervals.paired_item_interval``): Wilson for a
share, the paired rule of every comparison for a difference, neither of
which has zero width at N < 30; a mean that is not a share (macro-F1,
attention) gets no interval below 30 items."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from conformbench.reports.publish import publish
from conformbench.runner.shipped import shipped_replay
from conformbench.scoring import intervals
from conformbench.scoring.paired import paired_delta

#: "12.5 [12.5, 12.5]", "+0.0 [+0.0, +0.0]", "0.00 [0.00, 0.00]": a point printed as an interval
_POINT = re.compile(r"\[\s*([+-]?\d+(?:\.\d+)?)%?,\s*\1%?\s*\]")


def _first_items(name: str, keep: int, out: Path) -> Path:
    """The shipped replay ``name`` cut to its first ``keep`` items."""
    kept: set[str] = set()
    lines = []
    for line in shipped_replay(name).read_text(encoding="utf-8").split("\n"):
        if not line:
            continue
        rec = json.loads(line)
        if rec["kind"] == "item":
            if len(kept) >= keep:
                continue
            kept.add(rec["item"]["id"])
        elif rec["kind"] == "generation" and rec["item_id"] not in kept:
            continue
        lines.append(line)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


@pytest.mark.long
@pytest.mark.parametrize(("name", "keep"), [("concodeeval-validation", 2), ("concodeeval-validation", 4), ("concodeeval-generation", 4)])
def test_no_section_prints_a_point_as_an_interval_at_small_n(tmp_path: Path, name: str, keep: int) -> None:
    replay = _first_items(name, keep, tmp_path / "replay.jsonl")
    done = publish([replay], tmp_path, [])
    text = done.files.markdown.read_text(encoding="utf-8")
    points = sorted({m.group(0) for m in _POINT.finditer(text)})
    assert points == [], points
    assert "Val Acc % [95% Wilson]" in text or "Gen Acc" in text


def test_a_yes_no_share_gets_exactly_the_arms_jobs_intervals() -> None:
    """One code path: for yes/no items the shared functions are Wilson and
    the paired rule (bootstrap or Newcombe) exactly as the arms job computes them."""
    rng = np.random.default_rng(7)
    for n in (4, 20, 150):
        a, b = rng.random(n) < 0.4, rng.random(n) < 0.6
        assert intervals.item_share_interval(a.astype(float)) == intervals.wilson(int(a.sum()), n)
        ci, method = intervals.paired_item_interval(a.astype(float), b.astype(float))
        delta = paired_delta("m", a, b)
        assert method == delta.method and ci == pytest.approx(delta.ci95)


def test_fractional_shares_are_never_narrower_than_the_items_support() -> None:
    """Shares over several samples or formats per item: the interval is over
    the items, and no point at small N even when every share is 0 or 1."""
    for shares in (np.zeros(3), np.ones(3), np.array([0.5, 0.25, 0.75])):
        lo, hi = intervals.item_share_interval(shares)
        assert hi - lo > 0.2
    (lo, hi), method = intervals.paired_item_interval(np.zeros(4), np.full(4, 0.5))
    assert method == "newcombe" and lo < 0.5 < hi and hi - lo > 0.2
