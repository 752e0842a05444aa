"""``conformbench run`` through the real entry point: exit codes, --json,
resume, the canary, and (slow) a real end-to-end run on the embedded model."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runner"))
import runfakes  # noqa: F401 - registers the fake backend and task

from conformbench.cli.main import main
from conformbench.records.replay_file import ReplayContents, read_replay


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


@pytest.mark.long
@pytest.mark.slow
def test_real_end_to_end_run_on_the_embedded_model(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    code = main(["run", "--task", "gsm8k", "--n", "1", "--max-tokens", "24",
                 "--arm", "unconstrained,prompt_only[answer],constrained[answer],"
                          "reason_then_constrain[answer]",
                 "--threads", "1", "--out", str(out), "--json", "--quiet"])
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
    assert "option prompt_style: " in (err := capsys.readouterr().err) and "'validbutwrng'; did you mean 'validbutwrong'?" in err


@pytest.mark.long
@pytest.mark.slow
def test_prompt_style_validbutwrong_runs_validbutwrongs_prompts(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cli = pytest.importorskip("validbutwrong.cli")
    out = tmp_path / "out"
    code = main(["run", "--task", "bfcl-simple", "--n", "1", "--max-tokens", "48",
                 "--prompt-style", "validbutwrong",
                 "--arm", "unconstrained,constrained[arguments],reason_then_constrain[arguments]",
                 "--threads", "1", "--out", str(out), "--json", "--quiet"])
    assert code == 0
    replay = read_replay(out / "replay.jsonl")
    assert replay.header.spec.tasks[0].params == {"prompt_style": "validbutwrong"}
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
README = Path(__file__).resolve().parents[2] / "README.md"
README_URL = "http://127.0.0.1:8000/v1"


def _readme_openai_line() -> list[str]:
    lines = [line.split("  #")[0].strip() for line in README.read_text(encoding="utf-8").splitlines()
             if line.startswith("conformbench run --backend openai")]
    assert len(lines) == 1, "the README shows one openai run line"
    args = shlex.split(lines[0])
    assert args[0] == "conformbench" and README_URL in args
    return args[1:]


def _run_readme_openai_line(server: str, cwd: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[ReplayContents, list[Any]]:
    """Run the README's openai line as written, only the server's address
    changed (to a counting proxy in front of ``server``); the replay and the
    proxy's POSTs."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))
    from faultproxy import FaultPlan, FaultProxy

    args = _readme_openai_line()
    monkeypatch.chdir(cwd)  # the line writes to ./conformbench-out
    with FaultProxy(server, FaultPlan(only_path="/chat/completions")) as proxy:
        argv = [proxy.base_url if a == README_URL else a for a in args]
        assert main([*argv, "--quiet"]) == 0
        posts = [e for e in proxy.events if e.method == "POST"]
    return read_replay(cwd / "conformbench-out" / "replay.jsonl"), posts


@pytest.mark.slow
@pytest.mark.server
@pytest.mark.long
@pytest.mark.timeout(600)
def test_the_readme_openai_line_runs_against_llama_cpp_python_server(
        llama_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's line as written, only the server's address changed (to a
    counting proxy in front of llama-cpp-python's server on a free port): the
    engine follows the backend, the dialect is detected and recorded, and the
    refused dialect costs one request."""
    replay, posts = _run_readme_openai_line(llama_server, tmp_path, monkeypatch)
    out = tmp_path / "conformbench-out"
    model = replay.models[0]
    assert model.metadata["response_format_dialect"] == "json_object_schema"
    assert model.metadata["dialect_choice"].startswith("detected (json_schema: error: HTTP 500")
    assert model.canary["server"]["passed"] is True
    # the canary's json_schema request (refused: one 500, never retried), then json_object_schema
    assert [e.status for e in posts[:2]] == [500, 200] and [e.status for e in posts].count(500) == 1
    assert len(posts) == 2 + len(replay.generations)
    constrained = [g for g in replay.generations if g.condition.engine == "server"]
    assert constrained and all(g.finish_reason in ("stop", "length") for g in constrained)
    assert all("json_object" in (g.engine_input or "") for g in constrained)
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "response_format_dialect=json_object_schema" in report and "dialect_choice=detected" in report


@pytest.mark.slow
@pytest.mark.server
@pytest.mark.long
@pytest.mark.timeout(600)
def test_the_readme_openai_line_runs_against_llama_cpps_own_server(
        llama_cpp_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same README line against llama.cpp's llama-server (skipped with a
    named reason where it is not installed): it takes the OpenAI dialect, so
    detection costs no extra request."""
    replay, posts = _run_readme_openai_line(llama_cpp_server, tmp_path, monkeypatch)
    model = replay.models[0]
    assert model.metadata["response_format_dialect"] == "json_schema"
    assert model.metadata["dialect_choice"] == "detected (json_schema: applied)"
    assert model.canary["server"]["passed"] is True
    assert all(e.status == 200 for e in posts) and len(posts) == 1 + len(replay.generations)
    constrained = [g for g in replay.generations if g.condition.engine == "server"]
    assert constrained and all(g.finish_reason in ("stop", "length", "loop") for g in constrained)


def test_a_part_writes_no_report_and_the_plain_run_merges_the_parts(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, spec = tmp_path / "out", str(_spec(tmp_path))
    for part in ("1/2", "2/2"):
        assert main(["run", "--spec", spec, "--out", str(out), "--shard", part, "--json", "--quiet"]) == 0
        summary = json.loads(capsys.readouterr().out)
        assert summary["shard"] == part and summary["generated_now"] == summary["generations"]
    assert not (out / "report.json").exists() and not (out / "replay.jsonl").exists()
    assert main(["run", "--spec", spec, "--out", str(out), "--json", "--quiet"]) == 0
    merged = json.loads(capsys.readouterr().out)
    assert merged["generated_now"] == 0 and merged["resumed"] == 16
    assert (out / "report.json").exists()
    assert sorted(p.name for p in out.glob("replay*")) == ["replay.jsonl"]


def test_a_malformed_part_is_refused_before_any_work(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(["run", "--spec", str(_spec(tmp_path)), "--out", str(out), "--shard", "3/2"]) == 2
    assert "K must be between 1 and N" in capsys.readouterr().err
    assert not out.exists()
