"""``conformbench run --samples K``: the flag and the spec key
``[decoding] samples``, and their one-line refusals (exit 2)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runner"))
import runfakes  # noqa: F401 - registers the fake backend and task

from conformbench.cli.main import main


def _spec(tmp_path: Path, decoding: str = "") -> Path:
    path = tmp_path / "spec.toml"
    path.write_text(f"canary = false\n[decoding]\n{decoding}\n[[models]]\nlabel = \"m\"\nbackend = \"fake\"\n"
                    "[[tasks]]\nname = \"fake-qa\"\nn = 2\narms = [\"prompt_only\", \"constrained\"]\n",
                    encoding="utf-8")
    return path


def test_samples_flag_makes_k_generations_per_item_and_condition(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    code = main(["run", "--spec", str(_spec(tmp_path)), "--samples", "3", "--temperature", "0.7",
                 "--out", str(out), "--json", "--quiet"])
    assert code == 0
    assert json.loads(capsys.readouterr().out)["generated_now"] == 12
    assert "### Sampling: pass@k, all@k and per-item agreement" in (out / "report.md").read_text()


def test_the_spec_key_does_the_same(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = _spec(tmp_path, "samples = 2\ntemperature = 0.5")
    assert main(["run", "--spec", str(spec), "--out", str(tmp_path / "out"), "--json", "--quiet"]) == 0
    assert json.loads(capsys.readouterr().out)["generated_now"] == 8


@pytest.mark.parametrize(("flags", "message"), [
    (["--samples", "3"], "--samples 3 at temperature 0 would give 3 identical greedy generations"),
    (["--samples", "2", "--temperature", "0.5", "--beams", "2"], "--samples 2 cannot run with --beams 2"),
    (["--samples", "0"], "--samples"),
])
def test_refusals_exit_2_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     flags: list[str], message: str) -> None:
    out = tmp_path / "out"
    assert main(["run", "--spec", str(_spec(tmp_path)), *flags, "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert not (out / "replay.jsonl").exists()
