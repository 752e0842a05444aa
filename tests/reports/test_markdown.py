"""report.md against a golden file rendered from a small fixed replay.

Regenerate after an intended change with
CONFORMBENCH_UPDATE_GOLDEN=1 pytest tests/reports/test_markdown.py
and review the diff."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import runfakes  # noqa: F401 - registers the fake task and section the replay uses

from conformbench.reports.markdown import render_markdown
from conformbench.reports.rescore import score_replays
from conformbench.reports.write import load_report, write_reports

GOLDEN = Path(__file__).resolve().parent / "golden"


def test_report_md_matches_the_golden_file(tmp_path: Path) -> None:
    replay = tmp_path / "replay.jsonl"
    shutil.copyfile(GOLDEN / "replay.jsonl", replay)
    text = render_markdown(score_replays([replay]))
    golden = GOLDEN / "report.md"
    if os.environ.get("CONFORMBENCH_UPDATE_GOLDEN"):
        golden.write_text(text, encoding="utf-8")
    assert text == golden.read_text(encoding="utf-8")


def test_markdown_says_what_a_reader_needs(tmp_path: Path) -> None:
    text = (GOLDEN / "report.md").read_text(encoding="utf-8")
    assert "no detectable effect at N=5: +0.0 pts [" in text  # a null is never rounded into an effect
    assert "| q1 | constrained[answer]@llguidance | llguidance cannot compile" in text
    assert "invalid/wrong (cut)" in text
    assert "headline: same prompt and contract, only the grammar differs" in text
    assert "### Right answers per condition" in text  # the registered section
    # each arms table says how its intervals were made: Wilson per arm, paired bootstrap for deltas
    assert ("| condition | N | schema validity [95% Wilson] | answer accuracy [95% Wilson] | "
            "wrong-but-valid [95% Wilson] |") in text
    assert "the paired bootstrap (2000 resamples, seed 42) over 100+ items" in text
    # five items get Newcombe's interval, never a zero-width one, and the verdict leads
    assert "Newcombe; McNemar p=" in text and "[+0.0, +0.0]" not in text
    assert text.index("## Verdict") < text.index("## fake-qa on fake-model")
    assert "**Smoke run: " in text and "underpowered: N=5" in text


def test_report_json_reloads_and_renders_the_same(tmp_path: Path) -> None:
    shutil.copyfile(GOLDEN / "replay.jsonl", tmp_path / "replay.jsonl")
    run = score_replays([tmp_path / "replay.jsonl"])
    files = write_reports(run, tmp_path / "out")
    assert {p.name for p in files.all()} == {"report.json", "report.md", "report.html",
                                             "ledger.csv", "quadrants.svg"}
    again = load_report(files.json)
    assert again == run
    assert render_markdown(again) == files.markdown.read_text(encoding="utf-8")
    ledger = files.ledger.read_text(encoding="utf-8").splitlines()
    assert ledger[0] == "task,model,item_id,condition,state,truncated,runaway,sample"
    # 6 items x 4 conditions, less the 2 grammar conditions the engine left one item out of
    assert len(ledger) == 1 + 6 * 4 - 2
    assert "fake-qa,fake-model,q4,constrained[answer]@llguidance,invalid/wrong,yes,no,0" in ledger
