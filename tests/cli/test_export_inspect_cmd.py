"""``conformbench export inspect`` through the real entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformbench.cli.main import main

log_api = pytest.importorskip("inspect_ai.log")


def test_import_score_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "o.jsonl"
    source.write_text('{"item_id": "gsm8k_test_0", "text": "The answer is 18."}\n', encoding="utf-8")
    assert main(["import", "outputs", str(source), "--task", "gsm8k", "--out", str(tmp_path / "imp")]) == 0
    capsys.readouterr()
    assert main(["export", "inspect", str(tmp_path / "imp/replay.jsonl"), "--out", str(tmp_path / "logs")]) == 0
    said = capsys.readouterr().out
    assert said.startswith("wrote 1 Inspect log (1 samples, eval set conformbench-")
    assert main(["export", "inspect", str(tmp_path / "imp/replay.jsonl"), "--out", str(tmp_path / "j"),
                 "--format", "json", "--json"]) == 0
    (path,) = json.loads(capsys.readouterr().out)["logs"]
    (sample,) = log_api.read_eval_log(path).samples
    assert sample.scores["correct"].value == 1.0 and "valid" not in sample.scores


@pytest.mark.parametrize(("args", "message"), [
    (["missing.jsonl", "--out", "o"], "cannot read"),
    (["missing.jsonl", "--out", "o", "--format", "yaml"], "unknown Inspect log format 'yaml'"),
    (["missing.jsonl"], "Missing option '--out'"),
])
def test_errors_are_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        args: list[str], message: str) -> None:
    args = [str(tmp_path / a) if a in ("o", "missing.jsonl") else a for a in args]
    assert main(["export", "inspect", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("conformbench: error: ") and message in err and "\n" not in err
