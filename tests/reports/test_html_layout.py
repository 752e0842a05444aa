"""report.html's layout without a browser: condition labels wrap only
between their parts, an all-empty column is left out, the conditions (table
and chart) come in a reading order; report.md's metadata list stays a list."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

from conformbench.records.results import ScoredRun
from conformbench.reports.html import render_html
from conformbench.reports.markdown import render_markdown
from conformbench.reports.quadrants import ordered_arms, quadrants_svg
from conformbench.reports.rescore import score_replays
from conformbench.runner.shipped import shipped_replay


@cache
def _scored(name: str) -> ScoredRun:
    return score_replays([shipped_replay(name)])


@pytest.mark.long
def test_labels_break_only_between_their_parts() -> None:
    page = render_html(_scored("concodeeval-generation"), "<svg/>")
    labels = re.findall(r'<code class="key">(.*?)</code>', page)
    assert labels and "code.key{white-space:nowrap}" in page
    for label in labels:
        for piece in label.split("<wbr>"):
            assert "-&gt;" not in piece or not piece.endswith("-")  # never "-" | ">"
    assert "json-&gt;json/<wbr>0shot/<wbr>constrained[schema]<wbr>@llguidance" in page


@pytest.mark.long
def test_a_column_nothing_fills_is_left_out() -> None:
    generation = render_html(_scored("concodeeval-generation"), "<svg/>")
    assert "executable accuracy" not in generation and "not computed" not in generation
    run = _scored("gsm8k")
    arms = list(run.results[0].arms)
    i = next(i for i, a in enumerate(arms) if a.validity is not None)
    arms[i] = arms[i].model_copy(update={"executable_accuracy": arms[i].validity})
    one = run.model_copy(update={"results": [run.results[0].model_copy(update={"arms": arms})]})
    page = render_html(one, "<svg/>")
    assert "executable accuracy" in page and page.count("not computed") == len(arms) - 1


@pytest.mark.long
def test_the_generation_conditions_come_in_reading_order() -> None:
    (result,) = [r for r in _scored("concodeeval-generation").results if r.task == "generation"]
    keys = [a.key for a in ordered_arms(result)]
    assert keys[:4] == ["json->json/0shot/prompt_only[schema]",
                        "json->json/0shot/constrained[schema]@llguidance",
                        "yaml->json/0shot/prompt_only[schema]",
                        "yaml->json/0shot/constrained[schema]@llguidance"]
    assert keys[-1] == "nl->xml/0shot/constrained[schema]@llguidance"
    svg = quadrants_svg(_scored("concodeeval-generation"))
    drawn = [k.replace("&gt;", ">") for k in re.findall(r'text-anchor="end">([^<]+)</text>', svg)]
    assert drawn[:len(keys)] == keys


def test_the_canary_bullet_keeps_the_markdown_list_whole(tmp_path: Path) -> None:
    text = render_markdown(_scored("gsm8k"))
    meta = text[text.index("## Run metadata"):].splitlines()[2:]
    listed = [line for line in meta if line.strip()]
    assert listed and all(line.lstrip().startswith("- ") for line in listed), listed[:8]
    assert any("canary llguidance: passed=True" in line and '\\n' in line for line in listed)
