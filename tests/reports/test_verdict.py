"""The verdict on top: a 4-item slice of the shipped GSM8K replay, rescored,
prints no degenerate interval, says it is underpowered and the N needed, and
calls itself a smoke run, first in the terminal, report.md and report.html;
the shipped 200 items are not a smoke run."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from html import escape
from pathlib import Path

import pytest

from conformbench.reports.rescore import score_replays
from conformbench.reports.verdict import smoke_run, terminal_comparisons
from conformbench.runner.shipped import shipped_replays


def _slice(src: Path, dst: Path, k: int) -> Path:
    """The replay with its first k items and only their generations."""
    keep: set[str] = set()
    out = []
    for line in src.read_text(encoding="utf-8").splitlines(keepends=True):
        rec = json.loads(line)
        if rec["kind"] == "item":
            if len(keep) >= k:
                continue
            keep.add(rec["item"]["id"])
        if rec["kind"] == "generation" and rec["item_id"] not in keep:
            continue
        out.append(line)
    dst.write_text("".join(out), encoding="utf-8")
    return dst


def _score(replay: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "80", "TERM": "dumb"}
    return subprocess.run([sys.executable, "-m", "conformbench.cli.main", "score", str(replay), "--out", str(out),
                           *extra], capture_output=True, text=True, timeout=300, env=env, check=False)


def _intervals(text: str) -> list[tuple[float, float]]:
    return [(float(a), float(b)) for a, b in re.findall(r"\[([-+]\d+\.\d), ([-+]\d+\.\d)\]", text)]


@pytest.mark.long
def test_four_items_are_underpowered_and_never_degenerate(tmp_path: Path) -> None:
    replay = _slice(shipped_replays()["gsm8k"], tmp_path / "replay.jsonl", 4)
    done = _score(replay, tmp_path / "out")
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stderr.splitlines()
    assert sum(line.startswith("verdict: smoke run:") for line in lines) == 1  # after the rates and comparisons
    head = lines.index("  verdict (paired 95% intervals; the statistics are in report.md):")
    assert lines.index(next(line for line in lines if line.startswith("verdict: smoke run:"))) > head
    assert lines[head + 1].startswith("  - the grammar (prompt_only[answer] → constrained[answer]@llguidance): "
                                      "schema validity +")
    assert lines[head + 1].endswith(", too few items")
    first = lines[head + 2]
    assert first.startswith("    the grammar (prompt_only[answer] → constrained[answer]@llguidance) on 4 items: ")
    assert "to tell a 10-point difference from chance this run would need about " in first
    deltas = [i for i in _intervals(done.stderr) if i[0] != i[1] or i[0] != 0.0]
    assert deltas and all(hi - lo > 10 for lo, hi in _intervals(done.stderr))  # no point interval
    assert "+100.0, +100.0" not in done.stderr and ", detected" not in done.stderr
    md = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert md.index("## Verdict") < md.index("## gsm8k on smollm2-135m")
    assert "**Smoke run: " in md and "underpowered: N=4 detects no difference at 80% power" in md
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert page.index("<h2>Verdict</h2>") < page.index("<h2>gsm8k on smollm2-135m</h2>")
    assert "Smoke run: " in page
    # one function writes the headlines and sentences: the terminal's are report.md's and report.html's
    heads = [line[len("  - "):] for line in lines if line.startswith("  - the grammar (")]
    sentences = [line[len("    "):] for line in lines if line.startswith("    the grammar (")]
    assert len(sentences) == len(heads) == 2
    for head_line, sentence in zip(heads, sentences, strict=True):
        assert f"- **{head_line}**" in md.splitlines() and f"  - {sentence}" in md.splitlines()
        # report.html: the headline in bold, its sentence and statistics folded below it
        bold = page.index(f'<p class="headline"><strong>{escape(head_line)}</strong></p><details>')
        assert bold < page.index(f"<p>{escape(sentence)}</p>", bold) < page.index("</details>", bold)
    verdict = page[page.index("<h2>Verdict</h2>"):page.index("</section>")]
    assert "underpowered: N=4 detects no difference at 80% power" in verdict


@pytest.mark.long
def test_detect_names_the_difference(tmp_path: Path) -> None:
    replay = _slice(shipped_replays()["gsm8k"], tmp_path / "replay.jsonl", 4)
    done = _score(replay, tmp_path / "out", "--detect", "50")
    assert "to tell a 50-point difference from chance this run would need about " in done.stderr
    report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    assert report["detect"] == 0.5
    bad = _score(replay, tmp_path / "out", "--detect", "0")
    assert bad.returncode == 2 and "conformbench: error: --detect 0" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_the_shipped_200_items_are_a_result_not_a_smoke_run() -> None:
    run = score_replays([shipped_replays()["bfcl-simple"]])
    assert not smoke_run(run)
    (result,) = run.results
    lines = terminal_comparisons(result)
    assert lines[0] == "  verdict (paired 95% intervals; the statistics are in report.md):"
    assert lines[1] == ("  - the grammar (prompt_only[arguments] → constrained[arguments]@llguidance): schema validity "
                        "+92.5 points [+88.5, +96.0], likely real")
    assert lines[2] == (
        "    the grammar (prompt_only[arguments] → constrained[arguments]@llguidance) on 200 items: raised schema "
        "validity by 92.5 points [+88.5, +96.0], detected; raised AST match accuracy by 36.0 points [+29.5, +42.5], "
        "detected; raised wrong-but-valid by 56.5 points [+49.5, +63.5], detected.")
