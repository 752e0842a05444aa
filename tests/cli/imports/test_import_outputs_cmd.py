"""``conformbench import outputs`` through the real entry point, then
``score`` with a gate on what it wrote."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformbench.cli.main import main


def _outputs(tmp_path: Path) -> Path:
    source = tmp_path / "mine.jsonl"
    source.write_text('{"item_id": "gsm8k_test_0", "text": "{\\"answer\\": 18}"}\n'
                      '{"item_id": "gsm8k_test_1", "text": "{\\"answer\\": 5}"}\n'
                      '{"item_id": "gsm8k_test_2", "text": "{\\"answer\\": ", "finish_reason": "length"}\n',
                      encoding="utf-8")
    return source


def test_import_then_score_with_a_gate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "imp"
    assert main(["import", "outputs", str(_outputs(tmp_path)), "--task", "gsm8k", "--contract", "answer",
                 "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert "imported gsm8k: 3 outputs as prompt_only[answer] (1 at their token budget" in said
    assert "model mine" in said
    replay = out / "replay.jsonl"
    assert main(["score", str(replay), "--quiet", "--json"]) == 0
    (result,) = json.loads(capsys.readouterr().out)["results"]
    arm = result["arms"]["prompt_only[answer]"]
    assert (arm["validity"], arm["wrong_but_valid"], arm["truncated"]) == (2 / 3, 1 / 3, 1)
    # 1 of 3 right: the gate trips, exit 1
    assert main(["score", str(replay), "--quiet", "--out", str(tmp_path / "s"),
                 "--fail-if", "accuracy[prompt_only*] < 0.5"]) == 1
    assert (tmp_path / "s" / "ledger.csv").read_text().count("gsm8k_test_") == 3


def test_json_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import", "outputs", str(_outputs(tmp_path)), "--task", "gsm8k", "--model", "x",
                 "--out", str(tmp_path / "o"), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["condition"] == "unconstrained" and summary["model"] == "x"
    assert summary["items"] == 3 and summary["prompts_rebuilt"] == 3


@pytest.mark.parametrize("args", [
    ["--task", "gsm8", "--out", "o"],
    ["--task", "gsm8k", "--contract", "nope", "--out", "o"],
    ["--task", "gsm8k", "--out", "o", "--bogus"],
])
def test_errors_are_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        args: list[str]) -> None:
    args = [str(tmp_path / a) if a == "o" else a for a in args]
    assert main(["import", "outputs", str(_outputs(tmp_path)), *args]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("conformbench: error: ") and "\n" not in err
    assert not (tmp_path / "o" / "replay.jsonl").exists()


def test_cut_imported_answers_get_advice_that_fits(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue #44: an import has no run to redo with a larger budget; its
    reports say where the cut answers can be made again instead."""
    out = tmp_path / "imp"
    assert main(["import", "outputs", str(_outputs(tmp_path)), "--task", "gsm8k", "--contract", "answer",
                 "--out", str(out)]) == 0
    assert main(["score", str(out / "replay.jsonl"), "--out", str(tmp_path / "s")]) == 0
    said = capsys.readouterr().err
    report = (tmp_path / "s" / "report.md").read_text(encoding="utf-8")
    for text in (said, report):
        assert "hit the token budget" in text
        assert "rerun with a larger budget" not in text
        assert "imported from outputs, so no conformbench rerun can extend them" in text
