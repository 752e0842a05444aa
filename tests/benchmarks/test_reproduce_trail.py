"""Issue #61's last "done when", kept: following ``api.reproduce``'s replay
argument through the replay's state (benchmarks/reproduce_trail.py, its
definitions in the script's docstring) climbs back up at most ``CLIMBS``
times. A change that sends the trail back into a room it already left
fails here, with the edges to read."""

from __future__ import annotations

import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

from reproduce_trail import follow  # noqa: E402

#: the most climbs allowed, the value reached (issue #61's target was 14; main before the ledger's one
#: door: 17; with it: 13; the item comparison in the ledger: 12)
CLIMBS = 12


def test_following_the_replay_climbs_back_up_at_most_the_target() -> None:
    trail = follow()
    assert {"conformbench.api.runs", "conformbench.runner.run"} <= set(trail.rooms)
    assert len(trail.climbs) <= CLIMBS, "\n".join(f"{b} -> {a}" for b, a in trail.climbs)
