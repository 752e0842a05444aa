"""Every shipped replay rescores to the same numbers: per task, model and
condition the counts behind each rate (k of n), the cut/looped/error counts,
the exclusions, and every report section's gate metrics, against a golden
file written from the replays before the layout change of 2026-12-01 (the
whole report.json was compared then, equal but for file paths).

Intervals are left out on purpose: they are the statistics' method, not the
replays' numbers. Regenerate deliberately with
``CONFORMBENCH_UPDATE_GOLDEN=1 python -m pytest tests/scoring/test_shipped_numbers.py``
and read the diff."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from conformbench.records.results import Rate, ScoredRun
from conformbench.reports.rescore import score_replays
from conformbench.runner.shipped import shipped_replays

GOLDEN = Path(__file__).resolve().parent / "golden" / "shipped_numbers.json"


def _rate(rate: Rate | None) -> list[int] | None:
    return None if rate is None else [rate.k, rate.n]


def _numbers(run: ScoredRun) -> list[dict[str, Any]]:
    return [{
        "task": r.task, "model": r.model, "n": r.n,
        "excluded": sorted({(e.item_id, e.condition or "") for e in r.exclusions}),
        "arms": {a.key: {"n": a.n, "validity": _rate(a.validity), "accuracy": _rate(a.accuracy),
                         "wrong_but_valid": _rate(a.wrong_but_valid), "parsed": _rate(a.parsed),
                         "truncated": a.truncated, "looped": a.looped, "runaway": a.runaway,
                         "errors": a.errors} for a in r.arms},
        "sections": {s.name: {k: round(v, 12) for k, v in sorted(s.metrics.items())} for s in r.sections},
    } for r in run.results]


def _all_numbers() -> dict[str, Any]:
    return {name: json.loads(json.dumps(_numbers(score_replays([path]))))
            for name, path in sorted(shipped_replays().items())}


@pytest.mark.long
def test_shipped_replays_rescore_to_the_golden_numbers() -> None:
    got = _all_numbers()
    if os.environ.get("CONFORMBENCH_UPDATE_GOLDEN"):
        GOLDEN.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        pytest.skip("golden file rewritten")
    want = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert sorted(got) == sorted(want)
    for name in want:
        assert got[name] == want[name], name
