"""Shared report wording: the replay source line names superseded retries
in both report.md and report.html, and only when there are some."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import runfakes  # noqa: F401 - registers the fake task and section the replay uses

from conformbench.reports.html import render_html
from conformbench.reports.markdown import render_markdown
from conformbench.reports.rescore import score_replays
from conformbench.reports.text import source_line

GOLDEN = Path(__file__).resolve().parent / "golden"
SUPERSEDED = "superseded by a later retry"


def _with_retries(tmp_path: Path, retries: int) -> Path:
    """The golden replay with ``retries`` failed tries written before the
    first generation's answer (what a resumed run leaves)."""
    path = tmp_path / "replay.jsonl"
    lines = (GOLDEN / "replay.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if '"kind":"generation"' in line)
    failed = json.loads(lines[first]) | {"finish_reason": "error", "text": "", "error": "HTTP 503"}
    path.write_text("".join(lines[:first] + [json.dumps(failed) + "\n"] * retries + lines[first:]),
                    encoding="utf-8")
    return path


def test_superseded_lines_are_reported_in_markdown_and_html(tmp_path: Path) -> None:
    run = score_replays([_with_retries(tmp_path, 2)])
    assert run.replays[0].superseded == 2
    line = source_line(run.replays[0])
    assert line.endswith("; 2 generation lines were superseded by a later retry and not scored)")
    assert f"- replay: {line}" in render_markdown(run)
    assert "2 generation lines were superseded by a later retry" in render_html(run, "<svg/>")


def test_one_superseded_line_is_singular(tmp_path: Path) -> None:
    run = score_replays([_with_retries(tmp_path, 1)])
    assert "; 1 generation line was superseded by a later retry" in source_line(run.replays[0])


def test_nothing_is_said_when_nothing_was_superseded(tmp_path: Path) -> None:
    shutil.copyfile(GOLDEN / "replay.jsonl", tmp_path / "replay.jsonl")
    run = score_replays([tmp_path / "replay.jsonl"])
    assert run.replays[0].superseded == 0
    assert SUPERSEDED not in render_markdown(run)
    assert SUPERSEDED not in render_html(run, "<svg/>")


def test_an_interval_beside_an_exact_test_that_cannot_reject_says_why() -> None:
    """Four items all flipping one way: Newcombe's interval excludes 0, but
    the exact McNemar test cannot reach p < 0.05 with under 6 discordant
    items, so the line must not read as a contradiction."""
    import numpy as np

    from conformbench.reports.text import delta_text
    from conformbench.scoring.paired import paired_delta

    d = paired_delta("accuracy", np.zeros(4, dtype=bool), np.ones(4, dtype=bool))
    assert d.excludes_0 and not d.detected and d.mcnemar_p == 0.125
    text = delta_text(d, 4)
    assert text.startswith("not established at N=4: +100.0 pts [")
    assert "only 4 item(s) changed, and the exact test cannot reject with fewer than 6" in text


def test_an_interval_that_includes_0_gets_no_note() -> None:
    import numpy as np

    from conformbench.reports.text import delta_text
    from conformbench.scoring.paired import paired_delta

    a = np.array([True, False, True, False, True, False])
    d = paired_delta("accuracy", a, ~a)
    assert not d.excludes_0
    assert delta_text(d, 6).startswith("no detectable effect at N=6: ") and "exact test" not in delta_text(d, 6)
