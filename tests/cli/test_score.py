"""``conformbench score``: reports from replays alone, and the gate's exit
codes (0 ok, 1 tripped, 2 usage) through the real entry point."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runner"))
import runfakes  # noqa: F401 - registers the fake task the golden replay uses

from conformbench.cli.main import main

GOLDEN = Path(__file__).resolve().parents[1] / "reports" / "golden" / "replay.jsonl"


@pytest.fixture
def replay(tmp_path: Path) -> Path:
    path = tmp_path / "run" / "replay.jsonl"
    path.parent.mkdir()
    shutil.copyfile(GOLDEN, path)
    return path


def test_score_writes_every_report_next_to_the_replay(replay: Path) -> None:
    assert main(["score", str(replay), "--quiet"]) == 0
    names = {p.name for p in replay.parent.iterdir()}
    assert {"report.json", "report.md", "report.html", "ledger.csv", "quadrants.svg"} <= names


def test_json_summary_and_a_passing_gate(replay: Path, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "reports"
    code = main(["score", str(replay), "--out", str(out), "--json", "--quiet",
                 "--fail-if", "wrong_but_valid[constrained*] > 0.5"])
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["exit_code"] == 0 and summary["report"] == str(out / "report.json")
    (result,) = summary["results"]
    assert result["n"] == 6 and result["excluded"] == ["q1"]
    assert result["arms"]["constrained[answer]@llguidance"]["wrong_but_valid"] == 0.4
    assert [g["tripped"] for g in summary["gates"]] == [False]


def test_a_tripped_gate_exits_1_and_says_which(replay: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["score", str(replay), "--quiet",
                 "--fail-if", "accuracy[prompt_only[answer]] < 0.5",
                 "--fail-if", "validity[*answer*] > 0.99"])
    assert code == 1
    err = capsys.readouterr().err
    assert "gate tripped: accuracy[prompt_only[answer]] < 0.5: fake-qa / fake-model / " \
           "prompt_only[answer] = 0.3333" in err
    assert "validity[*answer*] > 0.99: fake-qa / fake-model / reason_then_constrain[answer]@llguidance = 1" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--fail-if", "acuracy > 0.1"], "unknown metric 'acuracy' (did you mean 'accuracy'?)"),
        (["--fail-if", "accuracy >> 0.1"], "expected a comparator"),
        (["--fail-if", "accuracy[zzz] > 0.1"], "matches no condition"),
    ],
)
def test_usage_errors_exit_2(replay: Path, args: list[str], message: str,
                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", str(replay), "--quiet", *args]) == 2
    assert message in capsys.readouterr().err
    assert not (replay.parent / "report.json").exists()


def test_missing_or_bad_replay_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", str(tmp_path / "nope.jsonl")]) == 2
    assert "cannot read" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    assert main(["score", str(bad)]) == 2
    assert "bad.jsonl:1: not a JSON line" in capsys.readouterr().err


def test_rescoring_the_same_replay_gives_identical_files(replay: Path, tmp_path: Path) -> None:
    names = ("report.json", "report.md", "report.html", "ledger.csv", "quadrants.svg")
    assert main(["score", str(replay), "--out", str(tmp_path / "a"), "--quiet"]) == 0
    assert main(["score", str(replay), "--out", str(tmp_path / "b"), "--quiet"]) == 0
    for name in names:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


def _renamed_task(replay: Path, name: str) -> None:
    """The golden replay as if a user's own task ``name`` had made it."""
    text = replay.read_text(encoding="utf-8")
    replay.write_text(text.replace('"fake-qa"', json.dumps(name)), encoding="utf-8")


def test_a_task_of_the_users_module_is_named_with_the_flag_that_loads_it(
        replay: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _renamed_task(replay, "qa-conf")
    assert main(["score", str(replay), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "unknown task 'qa-conf'" in err and "--task-module FILE.py" in err


def test_task_module_rescores_a_users_task_without_a_model(replay: Path, tmp_path: Path) -> None:
    _renamed_task(replay, "qa-conf")
    module = tmp_path / "qa_conf_task.py"
    module.write_text("from conformbench import tasks\nimport runfakes\n\n"
                      "tasks.register('qa-conf')(type('QaConf', (runfakes.FakeQaTask,), {}))\n", encoding="utf-8")
    out = tmp_path / "rescored"
    assert main(["score", str(replay), "--task-module", str(module), "--out", str(out), "--quiet"]) == 0
    results = json.loads((out / "report.json").read_text(encoding="utf-8"))["results"]
    assert [r["task"] for r in results] == ["qa-conf"] and results[0]["n"] > 0


def test_a_task_module_that_fails_to_import_is_one_line(
        replay: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    module = tmp_path / "broken_task.py"
    module.write_text("raise RuntimeError('boom')\n", encoding="utf-8")
    assert main(["score", str(replay), "--task-module", str(module), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "importing it failed: RuntimeError: boom" in err


def test_the_verdict_headlines_are_bold_on_a_terminal_only(replay: Path, capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue #58: one bold line per comparison; a pipe or a log gets no escape codes."""
    assert main(["score", str(replay), "--out", str(replay.parent / "plain")]) == 0
    plain = capsys.readouterr().err
    head = next(line for line in plain.splitlines() if line.startswith("  - the grammar ("))
    assert "\x1b[" not in plain and head.endswith(", too few items")
    monkeypatch.setenv("FORCE_COLOR", "1")  # rich writes styles as to a terminal
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert main(["score", str(replay), "--out", str(replay.parent / "tty")]) == 0
    styled = capsys.readouterr().err
    assert f"\x1b[1m{head}" in styled
    assert all(not line.startswith("\x1b[1m") or "  - the grammar (" in line for line in styled.splitlines())


def test_a_torn_last_line_is_said_on_the_terminal_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """report.md says a half-written last record was cut; so does the
    terminal (#58), naming the replay and the bytes left out."""
    from conformbench.importers.outputs import import_outputs

    source = tmp_path / "outputs.jsonl"
    source.write_text('{"item": {"question": "2+2?", "answer": "4", "id": "q1"}, "text": "Answer: 4"}\n',
                      encoding="utf-8")
    replay = import_outputs(source, "custom", tmp_path / "imported", model="m").replay
    with replay.open("a", encoding="utf-8") as fh:
        fh.write('{"kind": "generation", "task": "cus')  # a write cut short
    capsys.readouterr()
    assert main(["score", str(replay), "--out", str(tmp_path / "scored")]) == 0
    err = capsys.readouterr().err
    assert f"{replay}: an unterminated last line (35 bytes) was ignored" in err, err
    assert "unterminated last line (35 bytes) was ignored" in (tmp_path / "scored/report.md").read_text()
