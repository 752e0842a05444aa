"""The chart of the mask's toll (scoring/mask_chart.py): well-formed SVG with,
per arm and group, a dot at the mean allowed share with its interval, a
diamond at the mean smallest share, and a box over the answers' percentiles,
each placed on one 0-100% scale and titled with its numbers; n/a arms said
in words; labels escaped; the same bytes for the same data (and its golden
file); embedded in the section's HTML with no external reference."""

from __future__ import annotations

import os
import re
from pathlib import Path

import defusedxml.ElementTree as SafeET
import numpy as np
import pytest

from conformbench.records.items import Condition, Item, ItemScore
from conformbench.records.mask_toll import MaskToll
from conformbench.scoring.mask_chart import toll_svg
from conformbench.scoring.mask_section import TollSection, toll_data
from conformbench.scoring.table import ScoredGeneration, ScoredTable

NS = "{http://www.w3.org/2000/svg}"
GOLDEN = Path(__file__).resolve().parent / "golden" / "mask_toll.svg"
LOCAL = Condition(arm="constrained", contract="answer", engine="llguidance")
THINK = Condition(arm="think_then_constrain", contract="answer", engine="llguidance")
SERVER = Condition(arm="constrained", contract="answer", engine="server")


def _row(i: int, cond: Condition, valid: bool, correct: bool, mean: float | None) -> ScoredGeneration:
    toll = None if mean is None else MaskToll(steps=8, mean_share=mean, min_share=mean / 2, refused_top=1,
                                               first_refused_step=2, first_refused_char=3, first_refused_at="/answer")
    thinking = "t" if cond is THINK else None
    if toll is not None and thinking is not None:
        toll = toll.model_copy(update={"answer": toll, "mean_share": 0.99})
    return ScoredGeneration(item=Item(id=f"q{i}", input={}), condition=cond, thinking=thinking,
                            score=ItemScore(valid=valid, correct=correct), finish_reason="stop", mask_toll=toll)


def _data():
    rows = [_row(0, LOCAL, True, True, 0.9), _row(1, LOCAL, True, True, 0.7), _row(2, LOCAL, True, True, 0.8),
            _row(3, LOCAL, True, False, 0.4), _row(4, LOCAL, False, False, 0.2),
            _row(0, THINK, True, True, 0.6), _row(1, THINK, True, False, 0.3),
            _row(0, SERVER, True, True, None)]
    table = ScoredTable(task="t", model="m", item_ids=tuple(f"q{i}" for i in range(5)),
                        conditions=(LOCAL, THINK, SERVER), rows=tuple(rows))
    data = toll_data(table)
    assert data is not None
    return data


def _title(el: object) -> str:
    return next(iter(el.iter(f"{NS}title"))).text or ""  # type: ignore[attr-defined]


def test_each_group_is_drawn_where_its_numbers_are() -> None:
    data = _data()
    root = SafeET.fromstring(toll_svg([("t on m", data)]).encode("utf-8"))
    assert root.tag == f"{NS}svg"
    dots = {_title(c).split(": ")[0]: c for c in root.iter(f"{NS}circle") if list(c.iter(f"{NS}title"))}
    groups = {(a.key, g.group): g for a in data.arms for g in a.groups if g.group != "all" and g.n}
    assert len(dots) == len(groups) == 5  # constrained: right, wrong but valid, invalid; thinking: right, wrong
    axis = [float(t.get("x", "0")) for t in root.iter(f"{NS}text") if (t.text or "") in ("0%", "100%")]
    left, right = min(axis), max(axis)
    for (key, name), g in groups.items():
        label = key + (" (answer)" if key.startswith("think") else "")
        dot = dots[f"{label}, {name} (N={g.n})"]
        assert float(dot.get("cx", "0")) == pytest.approx(left + (right - left) * g.mean_share, abs=0.1)
        low, high = g.mean_share_ci95
        assert f"mean allowed share {100 * g.mean_share:.1f}% [{100 * low:.1f}%, {100 * high:.1f}%]" in _title(dot)
    # the thinking arm is drawn from its answer part (0.6, 0.3), not its whole call's 0.99
    think_right = dots["think_then_constrain[answer]@llguidance (answer), right (N=1)"]
    assert float(think_right.get("cx", "0")) == pytest.approx(left + (right - left) * 0.6, abs=0.1)
    boxes = [r for r in root.iter(f"{NS}rect") if list(r.iter(f"{NS}title"))]
    right_box = next(b for b in boxes if _title(b).startswith("constrained[answer]@llguidance, right"))
    p25, p75 = np.percentile([0.9, 0.7, 0.8], [25, 75])
    assert float(right_box.get("x", "0")) == pytest.approx(left + (right - left) * p25, abs=0.1)
    assert float(right_box.get("width", "0")) == pytest.approx((right - left) * (p75 - p25), abs=0.2)
    diamonds = [_title(p) for p in root.iter(f"{NS}path") if list(p.iter(f"{NS}title"))]
    assert len(diamonds) == 5 and any("mean smallest share 20.0%" in d for d in diamonds)
    texts = [t.text or "" for t in root.iter(f"{NS}text")]
    assert any(t.startswith("n/a: the server") for t in texts)  # the server's arm, in words


def test_labels_are_escaped_and_the_bytes_fixed() -> None:
    data = _data()
    hacked = data.model_copy(update={"arms": [data.arms[0].model_copy(update={"key": "<b>&x\x07"}),
                                              *data.arms[1:]]})
    svg = toll_svg([("t on <m>", hacked)])
    root = SafeET.fromstring(svg.encode("utf-8"))  # well-formed despite the label
    assert any((t.text or "").startswith("<b>&x") for t in root.iter(f"{NS}text"))
    assert toll_svg([("t on m", data)]) == toll_svg([("t on m", data)])
    text = toll_svg([("t on m", data)])
    if os.environ.get("CONFORMBENCH_UPDATE_GOLDEN"):
        GOLDEN.write_text(text, encoding="utf-8")
    assert text == GOLDEN.read_text(encoding="utf-8")


def test_the_section_html_embeds_the_chart_and_nothing_external() -> None:
    html = TollSection().html(_data())
    assert html.startswith('<div class="plot"><svg ') and "<?xml" not in html
    assert not re.search(r"(href|src)=|https?://(?!www\.w3\.org/2000/svg)", html)


def test_a_report_without_quantiles_still_draws() -> None:
    """report.json written before the chart has no quantiles: no box, the rest drawn."""
    data = _data()
    old = data.model_copy(update={"arms": [a.model_copy(update={"groups": [
        g.model_copy(update={"quantiles": []}) for g in a.groups]}) for a in data.arms]})
    root = SafeET.fromstring(toll_svg([("t", old)]).encode("utf-8"))
    assert not [r for r in root.iter(f"{NS}rect") if list(r.iter(f"{NS}title"))]
    assert len([c for c in root.iter(f"{NS}circle") if list(c.iter(f"{NS}title"))]) == 5
