"""engines-check.json, .md and .html from a real (small) engine check."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from conformbench.audits.engine_check import CheckConfig, EngineCheckReport, attach_probe, run_engine_check
from conformbench.audits.engine_check.sources import CheckSchema, CheckSource, Instance
from conformbench.audits.probe import EngineProbe, KeywordResult, ProbeReport
from conformbench.reports.engine_check import (
    render_engine_check_html,
    render_engine_check_markdown,
    write_engine_check,
)

HOSTILE = '<script>alert("x")</script>|'


@pytest.fixture(scope="module")
def report(smollm_vocab) -> EngineCheckReport:
    schemas = (
        CheckSchema("int", "minimum", "", {"type": "integer", "minimum": 5},
                    (Instance("five", 5, True, "minimum"), Instance(HOSTILE, 3, False, "minimum"),
                     Instance("a string", "x", False, "type"))),
        CheckSchema("uniq", "uniqueItems", "", {"type": "array", "uniqueItems": True},
                    (Instance("dupes", [1, 1], False, "uniqueItems"),)),
    )
    source = CheckSource("known", "", schemas)
    return run_engine_check(smollm_vocab, [source], CheckConfig(engines=("gbnf", "llguidance"), mask_positions=1))


def test_markdown_has_the_summary_matrix_and_every_case(report):
    md = render_engine_check_markdown(report)
    assert "| gbnf | " in md and "| llguidance | " in md
    # gbnf: 2 schemas, both compiled; the minimum and uniqueItems violations get through
    assert "| known | 2 | 2 (100.0%) | 0 (0) | 4 | 50.0% | 0/1 | 2/3 |" in md
    # llguidance (lenient, as our engine compiles it) compiles both and lets uniqueItems through
    assert md.count("| known | 2 | 2 (100.0%) | 0 (0) |") == 2
    # one keyword matrix per engine
    gbnf, llguidance = md.split("## Keywords: gbnf")[1].split("## Keywords: llguidance")
    assert "| minimum | ignored, under 1/1 |" in gbnf and "| uniqueItems | ignored, under 1/1 |" in gbnf
    assert "| minimum | enforced |" in llguidance and "| uniqueItems | ignored, under 1/1 |" in llguidance
    # shown as text, not HTML, as report.md shows its fields (issue #40)
    assert '| under | int | minimum | &lt;script>alert("x")&lt;/script>\\| | 3 | accepted |' in md
    # a '|' inside a document cannot break the table
    assert "\\|" in md


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.urls += [v or "" for k, v in attrs if k in ("src", "href")]


def test_html_is_self_contained_and_escapes_documents(report):
    page = render_engine_check_html(report)
    parser = _Tags()
    parser.feed(page)
    assert "script" not in parser.tags and parser.urls == []
    assert "&lt;script&gt;" in page
    assert page.count("<details>") == 4  # wrong verdicts and refusals, per engine
    assert "Keywords: gbnf" in page and "Keywords: llguidance" in page


def test_write_engine_check_round_trips(report, tmp_path):
    paths = write_engine_check(report, tmp_path / "out")
    assert [p.name for p in paths] == ["engines-check.json", "engines-check.md", "engines-check.html"]
    again = EngineCheckReport.model_validate_json(paths[0].read_text())
    assert again == report


def test_a_probe_run_joins_each_engine_matrix(report):
    probe = ProbeReport(
        created="2026-11-30T00:00:00+00:00", settings={}, model={"model_file": "m.gguf"},
        engines=[EngineProbe(engine="gbnf", version=None, available=True, reason=None, canary="passed",
                             canary_detail=None, keywords=[
                                 KeywordResult(keyword="minimum", status="ignored", detail="", probe_schema="{}",
                                               samples=[]),
                                 KeywordResult(keyword="pattern", status="enforced", detail="", probe_schema="{}",
                                               samples=[])])],
    )
    joined = attach_probe(report, probe, "engines.json")
    md = render_engine_check_markdown(joined)
    gbnf, llguidance = md.split("## Keywords: gbnf")[1].split("## Keywords: llguidance")
    assert "| keyword | known | probe (model) |" in gbnf
    assert "| minimum | ignored, under 1/1 | ignored |" in gbnf and "| pattern | - | enforced |" in gbnf
    assert "probe (model)" not in llguidance
    assert "engines.json (model m.gguf" in md
