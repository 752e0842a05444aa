"""Each benchmark's --json writer (benchmarks/_common.Report.finish) writes
what the scripts measure, tuple-keyed measurements included (vs_validbutwrong
keys its timings by (engine, arm) and crashed at its end writing them)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

from _common import Ratio, Report  # noqa: E402


def test_finish_writes_tuple_keyed_measurements(tmp_path: Path) -> None:
    report = Report(script="vs_validbutwrong.py", mode="quick")
    report.measurements["seconds"] = {("gbnf", "constrained"): 1.5, ("llguidance", "prompt_only"): 0.5}
    report.measurements["tokens"] = {8: 100}
    report.add(Ratio("seconds per token, ours/theirs", 0.4, 0.5, "<="))
    out = tmp_path / "bench.json"
    assert report.finish(out) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["measurements"]["seconds"] == {"gbnf/constrained": 1.5, "llguidance/prompt_only": 0.5}
    assert data["measurements"]["tokens"] == {"8": 100}
    assert data["ratios"][0]["met"] is True


def test_every_benchmark_writes_its_json_through_the_tested_writer() -> None:
    """A script that takes ``--json`` (``_common.parser``) and never calls
    ``Report.finish`` would accept the flag and write nothing."""
    scripts = sorted(p for p in BENCHMARKS.glob("*.py") if not p.name.startswith("_"))
    assert len(scripts) >= 15
    silent = [p.name for p in scripts if "parser(" in (text := p.read_text(encoding="utf-8"))
              and ".finish(" not in text]
    assert silent == []
