"""``conformbench import lm-eval`` through the real entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformbench.cli.main import main


def _sample(doc_id: int, schema: dict[str, object], text: str, compliance: float, validity: float) -> str:
    return json.dumps({"doc_id": doc_id, "doc": {"json_schema": json.dumps(schema)}, "resps": [[text]],
                       "filtered_resps": [text], "json_validity": validity, "schema_compliance": compliance})


def test_import_two_files_then_score(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    easy = tmp_path / "samples_jsonschema_bench_easy_2025-01-01.jsonl"
    hard = tmp_path / "samples_jsonschema_bench_hard_2025-01-01.jsonl"
    easy.write_text(_sample(0, {"type": "integer"}, "7", 1.0, 1.0) + "\n")
    # lm-eval strips "null" to "ull": not JSON for it, valid for us
    hard.write_text(_sample(0, {"type": "null"}, "null", 0.0, 0.0) + "\n")
    assert main(["import", "lm-eval", str(easy), str(hard), "--out", str(tmp_path / "o")]) == 0
    said = capsys.readouterr().out
    assert "imported 2 lm-eval samples (jsonschema_bench_easy: 1, jsonschema_bench_hard: 1)" in said
    assert "schema compliance: lm-eval 50.0%, conformbench 100.0%" in said
    assert "1 items scored differently" in said
    assert main(["score", str(tmp_path / "o/replay.jsonl"), "--quiet", "--fail-if",
                 "validity[prompt_only*] < 1"]) == 0


def test_errors_are_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import", "lm-eval", str(tmp_path / "samples_x_1.jsonl"), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("conformbench: error: cannot read lm-eval samples file") and "\n" not in err
