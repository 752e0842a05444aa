"""report.html references nothing outside itself (issue #49, defect 7):
Markdown in an --against replay's build strings became ``<img src="http://…">``
and ``<a href="http://…">``. Every field from a file is text: the page is
parsed and no element may point anywhere (no src, href, srcset, action...,
no ``url(`` in a style), whatever the labels and build strings hold."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from conformbench.cli.main import main
from conformbench.files import shipped_data

EVIL = ("![i](http://evil.example/i.png) [a](http://evil.example/a) <http://evil.example/auto> "
        "<img src=//evil.example/x> [r][ref]\n\n[ref]: file:///etc/passwd\n"
        "<a href='javascript:alert(1)'>x</a> \x1b]8;;http://evil.example\x07link\x1b]8;;\x07 \x1b[2J")
SHORT_EVIL = "\x1b]8;;http://evil.example\x07x\x1b]8;;\x07 ![i](http://evil.example/i.png) \u202e"
LABEL = "m ![l](http://evil.example/l.png) \x1b[31m\u202e<b>"
#: attributes that make a page load or open something
POINTING = {"src", "href", "srcset", "action", "formaction", "poster", "background", "data", "xlink:href",
            "ping", "longdesc", "cite", "manifest", "codebase"}


def _replay(path: Path, build: dict[str, Any], first: int) -> Path:
    """Three items of the shipped gsm8k replay from its ``first``, its model
    relabelled LABEL and its header's build set to ``build``."""
    lines = shipped_data("replays/gsm8k.jsonl").read_text(encoding="utf-8").split("\n")
    recs = [json.loads(line) for line in lines if line]
    ids = [r["item"]["id"] for r in recs if r["kind"] == "item"][first:first + 3]
    old = recs[1]["label"]
    kept = []
    for rec in recs:
        if rec["kind"] in ("item", "generation") and (rec.get("item_id") or rec["item"]["id"]) not in ids:
            continue
        if rec["kind"] == "header":
            rec["build"] = build
            for model in rec["spec"]["models"]:
                model["label"] = LABEL
        elif rec["kind"] == "model":
            rec["label"] = LABEL
        elif rec["kind"] == "generation" and rec["model"] == old:
            rec["model"] = LABEL
        kept.append(rec)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in kept), encoding="utf-8")
    return path


class _Pointers(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []
        self.tags: set[str] = set()
        self._style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self._style = tag == "style"
        for name, value in attrs:
            if name.startswith("xmlns"):  # a namespace's name (the inline SVG's), never fetched
                continue
            text = (value or "").lower()
            if name in POINTING or name.startswith("on") or "url(" in text or \
                    any(mark in text for mark in ("http:", "https:", "file:", "javascript:", "//")):
                self.found.append(f"<{tag} {name}={value!r}>")

    def handle_data(self, data: str) -> None:
        if self._style and "url(" in data:
            self.found.append(f"style url(: {data[:80]!r}")

    def handle_endtag(self, tag: str) -> None:
        self._style = False


@pytest.fixture
def reports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    # other items on each side: nothing pairs, so the section is its Markdown
    # (builds and unpaired conditions included) rendered as HTML
    # (a string build fact is shown as it is, a table as JSON, cut to 160 characters)
    ours = _replay(tmp_path / "a" / "replay.jsonl", {"cpu_features": SHORT_EVIL,
                                                     "llama_cpp": {"system_info": EVIL, "version": "1"}}, 0)
    theirs = _replay(tmp_path / "b" / "replay.jsonl", {"cpu_features": "x " + SHORT_EVIL,
                                                       "llama_cpp": {"system_info": "other " + EVIL,
                                                                     "version": EVIL}}, 3)
    code = main(["score", "--quiet", str(ours), "--against", str(theirs), "--out", str(tmp_path / "r")])
    assert code == 0, capsys.readouterr().err
    return tmp_path / "r"


def test_report_html_points_nowhere_whatever_the_replays_hold(reports: Path) -> None:
    page = (reports / "report.html").read_text(encoding="utf-8")
    assert "evil.example" in page  # the hostile strings are shown...
    parser = _Pointers()
    parser.feed(page)
    assert parser.found == []  # ...as text: nothing loads or links
    assert not parser.tags & {"img", "a", "script", "link", "iframe", "object", "embed", "base", "form"}


def _raw_controls(text: str) -> set[str]:
    """Control characters and bidi overrides (tab and line feed aside)."""
    return {ch for ch in text if ch not in "\t\n" and (not ch.isprintable() or ch in "\u202a\u202b\u202c\u202d"
                                                       "\u202e\u2066\u2067\u2068\u2069\u200e\u200f")}


def test_no_control_character_reaches_report_html_or_ledger_csv_raw(reports: Path) -> None:
    """Issue #49, defect 13: ESC/OSC sequences and bidi overrides in a label or
    build string are shown as their escapes (``\\x1b``), never raw."""
    page = (reports / "report.html").read_text(encoding="utf-8")
    ledger = (reports / "ledger.csv").read_text(encoding="utf-8")
    assert _raw_controls(page) == set() and _raw_controls(ledger) == set()
    assert "\\x1b[31m" in page and "\\u202e" in page and "\\x1b]8;;http" in page
    assert "\\x1b[31m" in ledger and "\\u202e" in ledger


def test_no_control_character_reaches_quadrants_svg_raw(reports: Path) -> None:
    """The chart's labels (the model's, read from the replay) too: XML 1.0
    forbids the controls raw, and a viewer would show the bidi override."""
    svg = (reports / "quadrants.svg").read_text(encoding="utf-8")
    assert _raw_controls(svg) == set()
    assert "\\x1b[31m" in svg and "\\u202e" in svg
