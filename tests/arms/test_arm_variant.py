"""A repair with other wording is one new module with one decorator: run
through the command line on the scripted backend, it shows up in ``list
arms``, in ``run --help``'s arm choices, answers in its own words, stops at
its own round limit, and the replay records it with its arguments (a rerun
under another recipe is refused). Run in a fresh interpreter, so the
registration does not leak into the other tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import conformbench
from conformbench.records.replay_file import read_replay

RUNNER_TESTS = Path(__file__).resolve().parents[1] / "runner"

ARM_MODULE = '''
from conformbench.arms import Verdict, repair_wording


@repair_wording("repair_terse", description="repair, re-asked in a few words", max_rounds=2)
def terse(verdict: Verdict, format_name: str) -> str:
    return f"{len(verdict.errors)} problem(s). Only the {format_name}, please."
'''

DRIVER = '''
import json, sys
sys.path[:0] = [sys.argv[1], sys.argv[2]]
import terse_arm, runfakes  # the new module; the scripted backend
from conformbench.cli.main import main
from conformbench.errors import UsageError
from conformbench.records.replay_file import read_replay
from conformbench.runner.spec import parse_spec
from pathlib import Path

out = Path(sys.argv[3])
codes = {"list": main(["list", "arms", "--json"]), "help": main(["run", "--help"])}
codes["run"] = main(["run", "--task", "gsm8k", "-n", "2", "--arm", "repair_terse", "--backend", "fake",
                     "--no-canary", "--quiet", "--out", str(out / "run")])
codes["score"] = main(["score", str(out / "run" / "replay.jsonl"), "--out", str(out / "scored"), "--quiet"])
spec = read_replay(out / "run" / "replay.jsonl").header.spec.as_dict()
spec["arms"]["repair_terse"]["arguments"]["max_rounds"] = 3
try:
    parse_spec({**spec, "out": str(out / "again")})
    codes["other_recipe"] = "accepted"
except UsageError as exc:
    codes["other_recipe"] = str(exc)
print("CODES " + json.dumps(codes))
'''


@pytest.mark.long
def test_a_repair_with_other_wording_is_one_module(tmp_path: Path) -> None:
    (tmp_path / "terse_arm.py").write_text(ARM_MODULE, encoding="utf-8")
    src = str(Path(conformbench.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]),
           "COLUMNS": "250", "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-c", DRIVER, str(tmp_path), str(RUNNER_TESTS), str(tmp_path)],
                          capture_output=True, text=True, timeout=300, env=env, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    codes = json.loads(proc.stdout.split("CODES ", 1)[1])
    assert {k: codes[k] for k in ("list", "help", "run", "score")} == {"list": 0, "help": 0, "run": 0, "score": 0}
    assert "the arm registered now is repair with {'feedback': 'terse_arm:terse', 'max_rounds': 2}" in (
        codes["other_recipe"])

    listed = json.loads(_first_json(proc.stdout))
    arm_rows = {row["name"]: row["about"] for row in listed["arms"]}
    assert arm_rows["repair_terse"] == "repair, re-asked in a few words"
    (arm_line,) = [line for line in proc.stdout.splitlines() if "--arm " in line]
    assert "repair_terse" in arm_line

    replay = read_replay(tmp_path / "run" / "replay.jsonl")
    assert replay.header.spec.as_dict()["arms"] == {
        "repair_terse": {"policy": "repair", "arguments": {"feedback": "terse_arm:terse", "max_rounds": 2}}}
    rounds: dict[str, list[int]] = {}
    for gen in replay.generations:
        assert gen.condition.arm == "repair_terse"
        rounds.setdefault(f"{gen.item_id}/{gen.condition.contract}", []).append(gen.round)
        if gen.round:  # the scripted model never answers gsm8k in JSON: every round re-asks
            assert gen.prompt.messages[-1].content == "1 problem(s). Only the JSON, please."
    # two items x two contracts, each stopped at the arm's own 2 answers (the run allows 3)
    assert len(rounds) == 4 and all(r == [0, 1] for r in rounds.values())
    report = json.loads((tmp_path / "scored" / "report.json").read_text(encoding="utf-8"))
    assert {a["key"] for a in report["results"][0]["arms"]} == {"repair_terse[answer]", "repair_terse[reasoning]"}


def _first_json(text: str) -> str:
    """The JSON document ``list --json`` printed first."""
    decoded, _ = json.JSONDecoder().raw_decode(text[text.index("{"):])
    return json.dumps(decoded)
