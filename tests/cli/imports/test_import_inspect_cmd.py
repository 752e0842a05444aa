"""``conformbench import inspect`` refuses what is not a log of a
conformbench Inspect task, in one line with exit 2 (the import itself runs
against a real server in tests/integrations/test_inspect_tasks.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformbench.cli.main import main

pytest.importorskip("inspect_ai.log")


def _error(capsys: pytest.CaptureFixture[str], args: list[str]) -> str:
    assert main(["import", "inspect", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("conformbench: error: ") and "\n" not in err
    return err


def test_foreign_logs_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "o.jsonl"
    source.write_text('{"item_id": "gsm8k_test_0", "text": "18"}\n', encoding="utf-8")
    assert main(["import", "outputs", str(source), "--task", "gsm8k", "--out", str(tmp_path / "imp")]) == 0
    # an Inspect log, but one `export inspect` wrote, not a run of conformbench's Inspect tasks
    assert main(["export", "inspect", str(tmp_path / "imp/replay.jsonl"), "--out", str(tmp_path / "logs")]) == 0
    capsys.readouterr()
    (log,) = (tmp_path / "logs").iterdir()
    assert "not a log of a conformbench Inspect task" in _error(capsys, [str(log), "--out", str(tmp_path / "o")])
    assert "not an Inspect log" in _error(capsys, [str(source), "--out", str(tmp_path / "o")])
    assert "no such file" in _error(capsys, [str(tmp_path / "nope.eval"), "--out", str(tmp_path / "o")])
