"""quadrants.svg: well-formed SVG with one bar segment per (condition, state)
whose title gives the ledger's count, labels escaped, deterministic."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import defusedxml.ElementTree as SafeET
import runfakes  # noqa: F401 - registers the fake task and section the replay uses

from conformbench.records.results import ScoredRun
from conformbench.reports.quadrants import STATE_COLOURS, inline_svg, quadrants_svg
from conformbench.reports.rescore import score_replays

GOLDEN = Path(__file__).resolve().parent / "golden"
NS = "{http://www.w3.org/2000/svg}"


def _run(tmp_path: Path) -> ScoredRun:
    shutil.copyfile(GOLDEN / "replay.jsonl", tmp_path / "replay.jsonl")
    return score_replays([tmp_path / "replay.jsonl"])


def test_bars_match_the_ledger(tmp_path: Path) -> None:
    run = _run(tmp_path)
    root = SafeET.fromstring(quadrants_svg(run).encode("utf-8"))
    assert root.tag == f"{NS}svg"
    tips = [t.text or "" for r in root.iter(f"{NS}rect") for t in r.iter(f"{NS}title")]
    result = run.results[0]
    want = Counter((k, s) for row in result.ledger for k, s in row.states.items())
    n_of = {a.key: a.n for a in result.arms}
    assert sorted(tips) == sorted(f"{k}: {s} {c} of {n_of[k]}" for (k, s), c in want.items())
    texts = {t.text for t in root.iter(f"{NS}text")}
    assert {a.key for a in result.arms} <= texts
    assert f"items (N={result.n})" in texts


def test_bar_widths_are_proportional_to_counts(tmp_path: Path) -> None:
    run = _run(tmp_path)
    root = SafeET.fromstring(quadrants_svg(run).encode("utf-8"))
    widths: dict[str, float] = {}
    for rect in root.iter(f"{NS}rect"):
        tip = next(iter(rect.iter(f"{NS}title")), None)
        if tip is not None:
            key = (tip.text or "").split(": ")[0]
            widths[key] = widths.get(key, 0.0) + float(rect.get("width", "0"))
    # a bar's width is its condition's own N (the fixture's engine left one
    # item out of the grammar arms), on one scale for the whole panel
    arms = {a.key: a.n for a in run.results[0].arms}
    assert set(widths) == set(arms) and len(set(arms.values())) == 2
    per_item = {round(widths[k] / n, 1) for k, n in arms.items()}
    assert max(per_item) - min(per_item) < 0.2


def test_labels_are_escaped_and_colours_kept(tmp_path: Path) -> None:
    run = _run(tmp_path)
    result = run.results[0]
    hacked = run.model_copy(update={"results": [result.model_copy(
        update={"model": "<script>x</script>&"})]})
    svg = quadrants_svg(hacked)
    assert "<script>" not in svg and "&lt;script&gt;x&lt;/script&gt;&amp;" in svg
    SafeET.fromstring(svg.encode("utf-8"))
    assert STATE_COLOURS["valid/wrong"] in svg


def test_empty_run_and_inlining(tmp_path: Path) -> None:
    empty = _run(tmp_path).model_copy(update={"results": []})
    svg = quadrants_svg(empty)
    assert "no scored generations" in svg
    inline = inline_svg(svg)
    assert inline.startswith("<svg") and "<?xml" not in inline and " id=" not in inline
