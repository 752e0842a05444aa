"""``conformbench import validbutwrong`` through the real entry point, then
``conformbench score`` on what it wrote."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformbench.cli.main import main

DATA = Path(__file__).resolve().parents[2] / "data" / "validbutwrong"


def test_import_then_score(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "bfcl"
    assert main(["import", "validbutwrong", str(DATA / "bfcl-simple.jsonl"), "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert "imported bfcl-simple: 200 items, 800 generations (0 excluded" in said
    assert f"conformbench score {out / 'replay.jsonl'}" in said
    assert main(["score", str(out / "replay.jsonl"), "--json", "--quiet"]) == 0
    summary = json.loads(capsys.readouterr().out)
    (result,) = summary["results"]
    assert result["task"] == "bfcl-simple" and result["n"] == 200
    assert result["model"] == "qwen2.5-0.5b-instruct-q4_k_m"
    assert result["arms"]["constrained[arguments]@outlines"]["validity"] == 1.0


def test_json_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["import", "validbutwrong", str(DATA / "gsm8k.jsonl"), "--out", str(tmp_path), "--json"])
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["task"] == "gsm8k" and summary["generations"] == 1200
    assert summary["engine"] == "outlines" and summary["truncated"] == 23
    assert summary["replay"] == str(tmp_path / "replay.jsonl")


def test_errors_are_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import", "validbutwrong", str(tmp_path / "nope.jsonl"), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("conformbench: error: cannot read validbutwrong replay") and "\n" not in err
    assert main(["import", "validbutwrng", "x", "--out", str(tmp_path)]) == 2
