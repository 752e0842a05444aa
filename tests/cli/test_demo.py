"""`conformbench demo` rescores the shipped full-size replays without a model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformbench.cli.main import main
from conformbench.runner.shipped import shipped_replays


def _report(out: Path, name: str) -> dict:
    return json.loads((out / name / "report.json").read_text(encoding="utf-8"))


def test_shipped_replays_are_listed(capsys: pytest.CaptureFixture[str]) -> None:
    assert {"gsm8k", "bfcl-simple"} <= set(shipped_replays())
    assert main(["demo", "--list"]) == 0
    listed = capsys.readouterr().out
    assert "gsm8k" in listed and "bfcl-simple" in listed


@pytest.mark.long
@pytest.mark.parametrize(("name", "arms"), [
    ("gsm8k", {"unconstrained", "prompt_only[answer]", "constrained[answer]@llguidance",
               "prompt_only[reasoning]", "constrained[reasoning]@llguidance",
               "reason_then_constrain[answer]@llguidance"}),
    ("bfcl-simple", {"unconstrained", "prompt_only[arguments]",
                     "constrained[arguments]@llguidance",
                     "reason_then_constrain[arguments]@llguidance"}),
])
def test_demo_rescores_a_full_size_replay_identically(tmp_path: Path, name: str,
                                                      arms: set[str]) -> None:
    assert main(["demo", name, "--out", str(tmp_path / "a"), "--quiet"]) == 0
    assert main(["demo", name, "--out", str(tmp_path / "b"), "--quiet"]) == 0
    first, second = _report(tmp_path / "a", name), _report(tmp_path / "b", name)
    (result,) = first["results"]
    assert result["n"] == 200 and result["exclusions"] == []
    assert {arm["key"] for arm in result["arms"]} == arms
    for arm in result["arms"]:
        assert arm["n"] == 200
    # everything but the paths of the files read is identical between rescorings
    first.pop("replays"), second.pop("replays")
    assert first == second
    for suffix in ("report.md", "report.html", "ledger.csv", "quadrants.svg"):
        assert (tmp_path / "a" / name / suffix).stat().st_size > 0


def test_demo_gate_trips_on_a_shipped_replay(tmp_path: Path) -> None:
    code = main(["demo", "gsm8k", "--out", str(tmp_path), "--quiet",
                 "--fail-if", "wrong_but_valid[constrained*] > 0.20"])
    assert code == 1


def test_unknown_replay_name_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "gsm8kk"]) == 2
    assert "did you mean 'gsm8k'" in capsys.readouterr().err


@pytest.mark.long
def test_a_gate_applies_to_the_replays_that_have_its_metric(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Issue #44: `gen_acc` was refused as unknown because the first replay
    (bfcl-simple) lacks it, though the demo's generation replay has it."""
    code = main(["demo", "bfcl-simple", "concodeeval-generation", "--out", str(tmp_path), "--quiet",
                 "--fail-if", "gen_acc[json->json] < 0.5", "--fail-if", "accuracy[constrained*] < 0.01"])
    err = capsys.readouterr().err
    assert code == 1, err
    assert "gate tripped: gen_acc[json->json] < 0.5: generation / smollm2-135m / json->json = 0.06" in err
    assert main(["demo", "bfcl-simple", "gsm8k", "--out", str(tmp_path), "--quiet",
                 "--fail-if", "gen_acc < 0.5"]) == 2
    assert "no replay here has it" in capsys.readouterr().err
