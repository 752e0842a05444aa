"""Every Markdown report renders untrusted fields inert (issue #59, case 9):
a replay's engine name, model label, item ids and metadata, a server's model
ids, a corpus's schema ids. Each report is rendered from such names and
parsed with markdown-it-py (CommonMark with tables, as GitHub reads them):
no link, image, autolink or raw HTML may come out of it. The escaping is one
function, ``records/markdown_escape.py``'s ``md_text`` (``md_code`` for a
field shown as code)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

from conformbench.records.markdown_escape import md_code, md_text

_RUNNER_TESTS = Path(__file__).resolve().parents[1] / "runner"
_GOLDEN = Path(__file__).resolve().parents[1] / "reports" / "golden"

#: each way a field could make something live, in one name
HOSTILE = ("<script>alert(1)</script>[x](javascript:alert(1))![i](http://evil.example/p.png)"
           "<http://evil.example/a>[r]: http://evil.example/ref `code` \\[y](http://evil.example/b)")
_LIVE = {"link_open", "image", "html_inline", "html_block"}


def _live(markdown: str) -> list[str]:
    """Every live link, image or HTML token markdown-it finds (tables on)."""
    parser = MarkdownIt("commonmark", {"html": True}).enable("table")
    found: list[str] = []

    def walk(tokens: list[Token]) -> None:
        for token in tokens:
            if token.type in _LIVE:
                found.append(f"{token.type}: {token.content or token.attrs}")
            walk(token.children or [])

    walk(parser.parse(markdown))
    return found


@pytest.mark.parametrize("text", [HOSTILE, "a\\", "\\<b>", "[a]\n(b)", "``x``` `", "www.evil.example", "x|y"])
def test_md_text_and_md_code_leave_nothing_live(text: str) -> None:
    for shown in (md_text(text), md_code(text), f"| {md_text(text)} | {md_code(text)} |\n|---|---|\n"):
        assert _live(shown) == [], shown
        assert _live(f"{shown}(http://evil.example)") == [], shown  # a template's '(' after it


def test_md_text_renders_the_text_as_written() -> None:
    parser = MarkdownIt("commonmark")
    for text in ("json->json/0shot/prompt_only[schema]", "a_b*c", "<x> & [y]", "\\"):
        html = parser.renderInline(md_text(text))
        assert html == parser.renderInline("").join([]) + html  # a string
        assert html.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&") == text, html


def _hostile_replay(tmp: Path) -> Path:
    """The golden replay with its engine, model label, item ids, task
    metadata and model metadata (a server's model ids) made hostile."""
    text = (_GOLDEN / "replay.jsonl").read_text(encoding="utf-8")
    for name in ("llguidance", "fake-model"):
        text = text.replace(json.dumps(name), json.dumps(f"{name}{HOSTILE}"))
    for i in range(6):
        text = text.replace(f'"q{i}"', json.dumps(f"q{i}{HOSTILE}"))
    lines = []
    for raw in text.split("\n"):
        record: Any = json.loads(raw) if raw else None
        if isinstance(record, dict) and record.get("kind") == "model":
            record["metadata"] = {**record["metadata"], HOSTILE: HOSTILE,
                                  "servers": [{"base_url": HOSTILE, "models": [HOSTILE], "dialect": HOSTILE}]}
        lines.append(json.dumps(record) if record is not None else raw)
    replay = tmp / "replay.jsonl"
    replay.write_text("\n".join(lines), encoding="utf-8")
    return replay


def test_report_md_from_a_hostile_replay_has_nothing_live(tmp_path: Path) -> None:
    """The issue's cases: raw `<script>` from a replay's engine name in the
    comparison headings, images and links from server model ids and
    metadata."""
    sys.path.insert(0, str(_RUNNER_TESTS))
    import runfakes  # noqa: F401 - registers the fake task of the golden replay

    from conformbench.reports.markdown import render_markdown
    from conformbench.reports.rescore import score_replays

    markdown = render_markdown(score_replays([_hostile_replay(tmp_path)]))
    assert "evil.example" in markdown  # the names are shown, as text
    assert _live(markdown) == []


def test_the_cost_report_md_has_nothing_live_but_its_own_chart() -> None:
    """The issue's case: a server's model id and a corpus's schema ids made
    images and `javascript:` links live in engines cost's report.md."""
    from conformbench.schemas.case import ExcludedSchema
    from conformbench.serving.dropped import ArmDrops, KeywordDrop
    from conformbench.serving.report import CostReport
    from conformbench.serving.report_markdown import cost_markdown

    report = CostReport(
        settings={"model": HOSTILE, "prompts": HOSTILE, "n": 1, "levels": [1], "repeats": 1, "max_tokens": 8},
        server={"base_url": HOSTILE, "dialect": HOSTILE, "models": [HOSTILE], "server_header": HOSTILE},
        arms=[], comparisons=[], complete=False,
        dropped=[ArmDrops(arm=HOSTILE, answered=1, parsed=1,
                          keywords=[KeywordDrop(keyword=HOSTILE, broken=1, under=1, examples=[HOSTILE])])],
        excluded=[ExcludedSchema(id=HOSTILE, source=HOSTILE, reason=HOSTILE)])
    markdown = cost_markdown(report, "latency.svg")
    assert markdown.count("evil.example") >= 6
    assert _live(markdown) == ["image: latency against concurrency"]  # the chart the report links itself


def test_engines_md_of_the_probe_has_nothing_live() -> None:
    from conformbench.audits.probe import EngineProbe, KeywordResult, ProbeReport
    from conformbench.audits.probe.markdown import probe_markdown

    keyword = KeywordResult(keyword=HOSTILE, status="enforced", detail=HOSTILE, probe_schema="", samples=[])
    engine = EngineProbe(engine=HOSTILE, version=HOSTILE, available=True, reason=HOSTILE, canary="passed",
                         canary_detail=HOSTILE, keywords=[keyword])
    report = ProbeReport(created="2026-12-03T00:00:00+00:00", model={"model_file": HOSTILE},
                         settings={"keywords": [HOSTILE], "n_per_keyword": 1, "max_tokens": 8}, engines=[engine],
                         server={"base_url": HOSTILE, "server_header": HOSTILE, "models": [HOSTILE],
                                 "dialect": HOSTILE, "dialect_choice": HOSTILE})
    markdown = probe_markdown(report)
    assert "evil.example" in markdown and _live(markdown) == []


def test_engines_check_md_has_nothing_live(smollm_vocab: Any) -> None:
    """Corpus ids (a schema's file name), descriptions and documents."""
    from conformbench.audits.engine_check import CheckConfig, run_engine_check
    from conformbench.audits.engine_check.sources import CheckSchema, CheckSource, Instance
    from conformbench.reports.engine_check import render_engine_check_markdown

    schema = CheckSchema(HOSTILE, HOSTILE, HOSTILE, {"type": "integer", "minimum": 5},
                         (Instance(HOSTILE, 3, False, "minimum"), Instance(HOSTILE, HOSTILE, False, "type")))
    report = run_engine_check(smollm_vocab, [CheckSource(HOSTILE, "", (schema,))],
                              CheckConfig(engines=("gbnf",), mask_positions=1))
    markdown = render_engine_check_markdown(report)
    assert "evil.example" in markdown and _live(markdown) == []


def _hostile_shipped(name: str, tmp: Path) -> Path:
    """A shipped replay with its model labels and engine names made hostile."""
    from conformbench.files import shipped_data

    text = shipped_data(f"replays/{name}.jsonl").read_text(encoding="utf-8")
    labels = {json.loads(raw)["label"] for raw in text.split("\n")[:50] if raw and '"kind":"model"' in raw}
    for name_ in labels | {"llguidance", "gbnf", "xgrammar", "outlines"}:
        text = text.replace(json.dumps(name_), json.dumps(name_ + HOSTILE))
    path = tmp / f"{name}.jsonl"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(("names", "against"), [
    (["concodeeval-beam"], ["concodeeval-beam-greedy"]),  # ConCodeEval's sections and --against's
    pytest.param(["concodeeval-validation-arms"], [], marks=pytest.mark.long),  # its arms' sections (9 s)
])
def test_report_md_of_shipped_replays_under_hostile_names_has_nothing_live(tmp_path: Path, names: list[str],
                                                                          against: list[str]) -> None:
    from conformbench.reports.markdown import render_markdown
    from conformbench.reports.rescore import score_replays

    run = score_replays([_hostile_shipped(n, tmp_path) for n in names],
                        against=[_hostile_shipped(n, tmp_path) for n in against] or None)
    markdown = render_markdown(run)
    assert "evil.example" in markdown and _live(markdown) == []
