"""report.html is one self-contained page: no scripts, no external URLs,
every part of the report present, untrusted text escaped."""

from __future__ import annotations

import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import runfakes  # noqa: F401 - registers the fake task and section the replay uses

from conformbench.records.results import ScoredRun
from conformbench.reports.html import render_html
from conformbench.reports.quadrants import quadrants_svg
from conformbench.reports.rescore import score_replays

GOLDEN = Path(__file__).resolve().parent / "golden"


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.urls += [v or "" for k, v in attrs if k in ("src", "href", "xlink:href")]


def _run(tmp_path: Path) -> ScoredRun:
    shutil.copyfile(GOLDEN / "replay.jsonl", tmp_path / "replay.jsonl")
    return score_replays([tmp_path / "replay.jsonl"])


def test_page_is_self_contained_and_complete(tmp_path: Path) -> None:
    page = render_html(_run(tmp_path))
    parser = _Tags()
    parser.feed(page)
    assert "script" not in parser.tags and "link" not in parser.tags
    assert all(not re.match(r"(https?:)?//", url) for url in parser.urls)
    assert "<svg" in page and "details" in parser.tags and "style" in parser.tags
    for needle in ("Conditions", "Comparisons", "Exclusions", "Ledger", "Run metadata",
                   "Right answers per condition", "no detectable effect at N=5",
                   "llguidance cannot compile", "1 right→wrong, 1 wrong→right",
                   "<th>schema validity</th>", "Rates with 95% Wilson intervals in brackets.",
                   "the paired bootstrap (2000 resamples, seed 42)", "<h2>Verdict</h2>"):
        assert needle in page, needle


def test_untrusted_text_is_escaped(tmp_path: Path) -> None:
    run = _run(tmp_path)
    evil = "<script>alert(1)</script>"
    result = run.results[0]
    excl = result.exclusions[0].model_copy(update={"reason": evil})
    hacked = run.model_copy(update={"results": [result.model_copy(update={"exclusions": [excl]})]})
    page = render_html(hacked)
    assert evil not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_svg_is_deterministic(tmp_path: Path) -> None:
    run = _run(tmp_path)
    svg = quadrants_svg(run)
    assert svg == quadrants_svg(run)
    assert svg.lstrip().startswith("<?xml") and "valid/wrong" in svg


def test_ledger_marks_cut_and_runaway_answers(tmp_path: Path) -> None:
    run = _run(tmp_path)
    result = run.results[0]
    row = next(r for r in result.ledger if r.truncated)
    key = row.truncated[0]
    assert "✂∞</span>" not in render_html(run)
    marked = row.model_copy(update={"runaway": [key]})
    ledger = [marked if r is row else r for r in result.ledger]
    page = render_html(run.model_copy(update={"results": [result.model_copy(update={"ledger": ledger})]}))
    assert page.count("✂∞</span>") == 1
    assert "✂∞ = cut inside a runaway number sequence" in page


def test_the_canary_text_is_escaped_once(tmp_path: Path) -> None:
    """Issue #48: the run metadata showed the canary's text as ``&quot;canary&quot;`` (escaped twice)."""
    text = (GOLDEN / "replay.jsonl").read_text().replace("canary turned off explicitly", 'said \\"canary\\" & <stop>')
    (tmp_path / "replay.jsonl").write_text(text)
    page = render_html(score_replays([tmp_path / "replay.jsonl"]))
    assert "said &quot;canary&quot; &amp; &lt;stop&gt;" in page
    assert "&amp;quot;" not in page and "&amp;lt;" not in page
