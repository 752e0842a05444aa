"""README command 1's run, end to end at one item per task: the main job
(``conformbench run`` with no spec) on the embedded model through real
llama.cpp and llguidance, in a child process as a user starts it, then
rerun to show it resumes with nothing generated twice.

The arms each task must report are read from ``default_spec()``, not
written here, so the test follows the main job when it changes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformbench.runner.defaults import default_spec

pytestmark = pytest.mark.long

pytest.importorskip("llama_cpp")


def _run(out: Path) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "conformbench.cli.main", "run", "-n", "1", "--threads", "1", "--out", str(out)]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run(argv, capture_output=True, text=True, timeout=1800, check=False, env=env)


def _replay_lines(out: Path) -> list[str]:
    return (out / "replay.jsonl").read_text(encoding="utf-8").splitlines()


def _base(arm: str) -> str:
    """'json->json/0shot/constrained[schema]@llguidance' -> 'constrained'."""
    return arm.split("/")[-1].split("@")[0].split("[")[0]


def test_the_main_job_runs_every_task_and_arm_then_resumes(tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = _run(out)
    assert first.returncode == 0, first.stderr[-4000:]
    assert "Traceback" not in first.stderr
    for name in ("report.md", "report.html", "report.json", "ledger.csv", "quadrants.svg"):
        assert (out / name).is_file(), name

    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    results = {r["task"]: r for r in report["results"]}
    spec = default_spec()
    assert sorted(results) == sorted(t.name for t in spec.tasks)
    for task in spec.tasks:
        result = results[task.name]
        assert result["n"] >= 1, task.name
        keys = [a["key"] for a in result["arms"]]
        for arm in task.arms:
            # a constrained arm's key carries its engine; the ConCodeEval cells prefix theirs
            assert any(_base(k) == _base(arm) for k in keys), (task.name, arm, keys)
        assert all(a["n"] == result["n"] for a in result["arms"]), task.name

    models = [json.loads(line) for line in _replay_lines(out) if '"kind":"model"' in line.replace(" ", "")]
    assert models and all(c["passed"] for m in models for c in m["canary"].values())

    before = _replay_lines(out)
    again = _run(out)
    assert again.returncode == 0, again.stderr[-4000:]
    after = _replay_lines(out)
    generated = [line for line in after if '"kind":"generation"' in line.replace(" ", "")]
    assert generated and len(generated) == len([line for line in before if line in generated])
    assert "recorded already" in again.stderr + again.stdout
