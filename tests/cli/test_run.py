"""``conformbench run`` through the real entry point: exit codes, --json,
resume, the canary, and (slow) a real end-to-end run on the embedded model."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runner"))
import runfakes  # noqa: F401 - registers the fake backend and task

from conformbench.cli.main import main
from conformbench.records.replay_file import read_replay


def _spec(tmp_path: Path, extra: str = "", task: str = "") -> Path:
    path = tmp_path / "spec.toml"
    path.write_text(
        f"canary = false\n{extra}\n[[models]]\nlabel = \"m\"\nbackend = \"fake\"\n"
        f"[[tasks]]\nname = \"fake-qa\"\nn = 4\n{task}\n",
        encoding="utf-8",
    )
    return path


def test_run_writes_replay_and_reports_and_prints_json(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    code = main(["run", "--spec", str(_spec(tmp_path)), "--out", str(out), "--json",
                 "--quiet"])
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["generations"] == 16 and summary["generated_now"] == 16
    assert summary["resumed"] == 0 and summary["exit_code"] == 0
    assert {"replay.jsonl", "report.json", "report.md", "report.html", "ledger.csv",
            "quadrants.svg"} <= {p.name for p in out.iterdir()}
    # a rerun resumes: nothing is generated again
    assert main(["run", "--spec", str(_spec(tmp_path)), "--out", str(out), "--json",
                 "--quiet"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["generated_now"] == 0 and again["resumed"] == 16


def test_gate_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = str(_spec(tmp_path))
    out = str(tmp_path / "out")
    assert main(["run", "--spec", spec, "--out", out, "--quiet",
                 "--fail-if", "wrong_but_valid[constrained*] > 0.9"]) == 0
    assert main(["run", "--spec", spec, "--out", out, "--quiet",
                 "--fail-if", "wrong_but_valid[constrained*] > 0.2"]) == 1
    assert "gate tripped: wrong_but_valid[constrained*] > 0.2" in capsys.readouterr().err
    assert main(["run", "--spec", spec, "--out", out, "--quiet",
                 "--fail-if", "wrong_but_vald > 0.2"]) == 2
    assert "did you mean 'wrong_but_valid'" in capsys.readouterr().err


def test_bad_gate_syntax_fails_before_anything_runs(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(["run", "--spec", str(_spec(tmp_path)), "--out", str(out),
                 "--fail-if", "accuracy"]) == 2
    assert not out.exists()


def test_usage_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "out")
    assert main(["run", "--spec", str(_spec(tmp_path, task="arms = [\"constraned\"]")),
                 "--out", out]) == 2
    assert "did you mean 'constrained'" in capsys.readouterr().err
    assert main(["run", "--spec", str(_spec(tmp_path, extra="bogus = 1")), "--out", out]) == 2
    assert "unknown key 'bogus'" in capsys.readouterr().err
    assert main(["run", "--task", "gsm8kk", "--out", out]) == 2
    assert "unknown task 'gsm8kk' (did you mean 'gsm8k'?)" in capsys.readouterr().err
    assert main(["run", "--spec", str(_spec(tmp_path)), "--out", out, "--quiet"]) == 0
    assert main(["run", "--spec", str(_spec(tmp_path, task="seed = 5")), "--out", out]) == 2
    assert "different spec" in capsys.readouterr().err


def test_canary_failure_exits_2_naming_the_engine(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text('[[models]]\nlabel = "m"\nbackend = "fake"\nextra = {broken = true}\n'
                    '[[tasks]]\nname = "fake-qa"\nn = 1\n', encoding="utf-8")
    assert main(["run", "--spec", str(spec), "--out", str(tmp_path / "o"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "canary failed for engine 'llguidance'" in err and "the run stops" in err


@pytest.mark.slow
def test_real_end_to_end_run_on_the_embedded_model(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    code = main(["run", "--task", "gsm8k", "--n", "1", "--max-tokens", "24",
                 "--arm", "unconstrained,prompt_only[answer],constrained[answer],"
                          "reason_then_constrain[answer]",
                 "--threads", "2", "--out", str(out), "--json", "--quiet"])
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["generations"] == 4 and summary["generated_now"] == 4
    replay = read_replay(out / "replay.jsonl")
    assert replay.models[0].canary["llguidance"]["passed"] is True
    assert replay.models[0].metadata["model_sha256"]
    gens = {g.condition.arm: g for g in replay.generations}
    assert set(gens) == {"unconstrained", "prompt_only", "constrained", "reason_then_constrain"}
    # the grammar forces the contract; the two-turn arm packages the free text
    assert json.loads(gens["constrained"].text).keys() == {"answer"}
    assert gens["reason_then_constrain"].free_text == gens["unconstrained"].text
    arms = summary["results"][0]["arms"]
    assert arms["constrained[answer]@llguidance"]["validity"] == 1.0
    assert arms["unconstrained"]["validity"] is None


def test_unknown_prompt_style_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "--task", "gsm8k", "--n", "1", "--prompt-style", "validbutwrng",
                 "--out", str(tmp_path), "--quiet"])
    assert code == 2
    assert "no prompt style 'validbutwrng' (did you mean 'validbutwrong'" in capsys.readouterr().err


@pytest.mark.slow
def test_prompt_style_validbutwrong_runs_validbutwrongs_prompts(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cli = pytest.importorskip("validbutwrong.cli")
    out = tmp_path / "out"
    code = main(["run", "--task", "bfcl-simple", "--n", "1", "--max-tokens", "48",
                 "--prompt-style", "validbutwrong",
                 "--arm", "unconstrained,constrained[arguments],reason_then_constrain[arguments]",
                 "--threads", "2", "--out", str(out), "--json", "--quiet"])
    assert code == 0
    replay = read_replay(out / "replay.jsonl")
    assert replay.header.spec["tasks"][0]["params"] == {"prompt_style": "validbutwrong"}
    theirs = cli.make_task("bfcl-simple")
    (item,) = theirs.items(1)
    schema = theirs.schemas_for(item)["arguments"]
    gens = {g.condition.arm: g for g in replay.generations}
    assert [m.content for m in gens["unconstrained"].prompt.messages] == [theirs.free_prompt(item)]
    assert [m.content for m in gens["constrained"].prompt.messages] == [theirs.json_prompt(item, schema)]
    packaging = gens["reason_then_constrain"].prompt.messages
    assert packaging[-1].content == theirs.package_prompt(item, schema)
    # the grammar enforced validbutwrong's schema: the output validates against it
    import jsonschema

    jsonschema.validate(json.loads(gens["constrained"].text), schema)
