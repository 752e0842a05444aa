"""The terminal after a real run (issue #44), read from what ``conformbench
run`` printed on the embedded model, stderr a pipe as in a log: each
condition's validity, accuracy and wrong-but-valid with intervals and N come
first, then each grammar comparison once, in one sentence; lines are whole (not
cut at 80 columns)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformbench.reports.text import rate_text

pytestmark = pytest.mark.slow

ARMS = ("unconstrained", "prompt_only[answer]", "constrained[answer]")


def _run(out: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "80", "TERM": "dumb", "OMP_NUM_THREADS": "1"}
    command = [sys.executable, "-m", "conformbench.cli.main", "run", "--task", "gsm8k", "-n", "3",
               *(f"--arm={arm}" for arm in ARMS), "--engine", "llguidance", "--threads", "1",
               "--json-tokens", "48", "--free-tokens", "48", "--out", str(out)]
    return subprocess.run(command, capture_output=True, text=True, timeout=900, env=env, check=False)


@pytest.mark.long
def test_the_rates_come_first_then_each_comparison_once(tmp_path: Path) -> None:
    done = _run(tmp_path / "out")
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stderr.splitlines()
    report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    (result,) = report["results"]
    heading = next(i for i, line in enumerate(lines) if line.startswith("gsm8k on smollm2-135m: N=3 items"))
    header = lines[heading + 2]
    assert header.split() [:2] == ["condition", "N"], lines[heading:heading + 6]
    assert "schema validity" in header and result["correctness_label"] in header and "wrong-but-valid" in header
    rows = lines[heading + 3:heading + 3 + len(result["arms"])]
    for arm, row in zip(result["arms"], rows, strict=True):
        # the row says the condition, its N and each rate with its interval, as report.json holds them
        assert row.split()[0] == arm["key"] and row.split()[1] == str(arm["n"]), row
        for metric in ("validity", "accuracy", "wrong_but_valid"):
            from conformbench.records.results import Rate

            rate = None if arm[metric] is None else Rate.model_validate(arm[metric])
            assert rate_text(rate) in row, (metric, row)
    comparisons = [c for c in result["comparisons"] if c["role"] == "headline"]
    assert comparisons
    first_comparison = min(i for i, line in enumerate(lines) if line.startswith("  - the grammar ("))
    assert first_comparison > heading + 3 + len(rows) - 1  # the table first
    for comp in comparisons:
        # a bold headline with the figure and its interval (#58), then the sentence below it, each once on one line
        grammar = f"the grammar ({comp['from_key']} → {comp['to_key']})"
        heads = [line for line in lines if line.startswith(f"  - {grammar}: ")]
        said = [line for line in lines if line.startswith(f"    {grammar} on {comp['n']} items: ")]
        assert len(heads) == 1 and len(said) == 1, (heads, said)
        assert " [" in heads[0] and " [" in said[0]
    assert max(len(line) for line in lines) > 80  # whole lines in a log, not cut at 80 columns
    assert not any(line.startswith("verdict: gsm8k") for line in lines)  # no second copy of the comparisons
