"""quadrants.svg, written as SVG text directly: a few rectangles and labels
need no plotting library, and matplotlib cost about half of a rescoring's
time (import plus drawing). The output is deterministic (same run, same
bytes) and carries no ids, so it can be inlined into HTML more than once.

Why two chart stacks (issue #43): matplotlib draws the ConCodeEval
sections' heatmaps and bars (scoring/concodeeval/figures.py), and is imported
only when a ConCodeEval table is reported; every report draws this figure.
Measured 2026-12-03 on the 2-core VM, busy (load 8.7): importing matplotlib
and saving one six-bar SVG took 6.1-7.2 s in a fresh process, while
`conformbench score` of the shipped GSM8K replay took 26.6-28.8 s in all
without it; drawing quadrants.svg through matplotlib would add about a
quarter to every arms-task rescoring for a figure of rectangles."""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr

from conformbench.formats.base import PAPER_SCHEMA_FORMATS
from conformbench.records.items import Condition
from conformbench.records.markdown_escape import plain_text
from conformbench.records.results import ArmMetrics, ScoredRun, TaskModelResult
from conformbench.reports.text import STATE_ORDER

__all__ = ["STATE_COLOURS", "inline_svg", "ordered_arms", "quadrants_svg"]

STATE_COLOURS = {
    "valid/right": "#2e7d32",
    "valid/wrong": "#c62828",  # the red cell: wrong behind a valid format
    "invalid/right": "#f9a825",
    "invalid/wrong": "#757575",
    "n/a/right": "#81c784",
    "n/a/wrong": "#bdbdbd",
}
_OTHER = "#e0e0e0"
#: average width of a character at font-size 11: label widths are estimated,
#: since measuring text would need a font engine
_CHAR_W = 6.6


@dataclass(frozen=True)
class _Layout:
    """Pixel geometry shared by every panel of one figure."""

    label_w: float  # the condition labels' column
    plot_w: float = 460.0
    legend_w: float = 150.0
    bar_h: float = 22.0
    gap: float = 6.0
    title_h: float = 30.0
    axis_h: float = 42.0

    @property
    def width(self) -> float:
        return self.label_w + self.plot_w + self.legend_w + 20.0

    def panel_height(self, rows: int) -> float:
        return self.title_h + max(rows, 1) * (self.bar_h + self.gap) + self.axis_h


_ARM_ORDER = ("unconstrained", "prompt_only", "constrained", "reason_then_constrain")


def _rank(order: tuple[str, ...], name: str | None) -> tuple[int, str]:
    return (order.index(name), "") if name in order else (len(order), name or "")


def _condition_key(c: Condition) -> tuple[object, ...]:
    return (_rank(PAPER_SCHEMA_FORMATS, c.text_axis("output_format")),
            _rank(PAPER_SCHEMA_FORMATS, c.text_axis("schema_format")), c.count_axis("shots"), _rank(_ARM_ORDER, c.arm), c.contract or "", c.engine or "")


def ordered_arms(result: TaskModelResult) -> list[ArmMetrics]:
    """The result's conditions in a reading order where they span formats
    (output format, then schema format, shots, arm): a replay lists them
    in the order its generations were written, which is no order at all."""
    if not any(a.condition.text_axis("schema_format") for a in result.arms):
        return list(result.arms)
    return sorted(result.arms, key=lambda a: _condition_key(a.condition))


def _counts(result: TaskModelResult) -> dict[str, Counter[str]]:
    counts: dict[str, Counter[str]] = {a.key: Counter() for a in ordered_arms(result)}
    for row in result.ledger:
        for key, state in row.states.items():
            counts.setdefault(key, Counter())[state] += 1
    return counts


def _ordered_states(counter: Counter[str]) -> list[str]:
    states = [s for s in STATE_ORDER if counter[s]]
    return states + sorted(s for s in counter if s not in STATE_ORDER)


def _ticks(n: int) -> list[int]:
    """At most about six round tick values from 0 to n."""
    if n <= 0:
        return [0]
    raw = n / 5
    power = 10 ** math.floor(math.log10(raw)) if raw >= 1 else 1
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    return list(range(0, n + 1, max(int(step), 1)))


def _text(x: float, y: float, body: str, **attrs: str) -> str:
    extra = "".join(f" {k.replace('_', '-')}={quoteattr(v)}" for k, v in attrs.items())
    # a label or model name read from a replay: controls shown as escapes (XML 1.0 forbids them raw)
    return f'<text x="{x:.1f}" y="{y:.1f}"{extra}>{escape(plain_text(body))}</text>'


def _bars(lay: _Layout, top: float, counts: dict[str, Counter[str]], n: int) -> list[str]:
    scale = lay.plot_w / max(n, 1)
    out = []
    for row, (key, counter) in enumerate(counts.items()):
        y = top + row * (lay.bar_h + lay.gap)
        out.append(_text(lay.label_w - 8, y + lay.bar_h / 2 + 4, key, text_anchor="end"))
        left = lay.label_w
        # a condition an engine left items out of has a shorter bar: its own N
        own_n = sum(counter.values())
        for state in _ordered_states(counter):
            width = counter[state] * scale
            tip = escape(f"{key}: {state} {counter[state]} of {own_n}")
            out.append(f'<rect x="{left:.1f}" y="{y:.1f}" width="{width:.1f}" '
                       f'height="{lay.bar_h:.1f}" fill="{STATE_COLOURS.get(state, _OTHER)}" '
                       f'stroke="#ffffff"><title>{tip}</title></rect>')
            left += width
    return out


def _axis(lay: _Layout, y: float, n: int) -> list[str]:
    scale = lay.plot_w / max(n, 1)
    right = lay.label_w + lay.plot_w
    out = [f'<line x1="{lay.label_w:.1f}" y1="{y:.1f}" x2="{right:.1f}" y2="{y:.1f}" stroke="#212121"/>']
    for tick in _ticks(n):
        x = lay.label_w + tick * scale
        out.append(f'<line x1="{x:.1f}" y1="{y:.1f}" x2="{x:.1f}" y2="{y + 4:.1f}" '
                   'stroke="#212121"/>')
        out.append(_text(x, y + 16, str(tick), text_anchor="middle"))
    out.append(_text(lay.label_w + lay.plot_w / 2, y + 34, f"items (N={n})",
                     text_anchor="middle"))
    return out


def _legend(lay: _Layout, top: float, states: list[str]) -> list[str]:
    x = lay.label_w + lay.plot_w + 14
    out = []
    for row, state in enumerate(states):
        y = top + row * 18
        out.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="12" height="12" '
                   f'fill="{STATE_COLOURS.get(state, _OTHER)}"/>')
        out.append(_text(x + 18, y + 10, state))
    return out


def _panel(lay: _Layout, top: float, result: TaskModelResult,
           counts: dict[str, Counter[str]]) -> list[str]:
    used = _ordered_states(sum(counts.values(), Counter()))
    title = f"{result.task} on {result.model}: validity × {result.correctness_label}"
    bars_top = top + lay.title_h
    axis_y = bars_top + max(len(counts), 1) * (lay.bar_h + lay.gap)
    return [_text(lay.label_w + lay.plot_w / 2, top + 18, title, text_anchor="middle",
                  font_size="13"),
            *_bars(lay, bars_top, counts, result.n), *_axis(lay, axis_y, result.n),
            *_legend(lay, bars_top, used)]


def quadrants_svg(run: ScoredRun) -> str:
    """One horizontal stacked bar per condition (valid/invalid x right/wrong
    counts over all items), one panel per task and model."""
    results = run.results or []
    counts = [_counts(r) for r in results]
    longest = max((len(k) for c in counts for k in c), default=10)
    lay = _Layout(label_w=min(longest * _CHAR_W + 16, 360.0))
    body: list[str] = []
    top = 0.0
    for result, panel_counts in zip(results, counts):
        body += _panel(lay, top, result, panel_counts)
        top += lay.panel_height(len(panel_counts))
    if not results:
        body.append(_text(lay.width / 2, 40, "no scored generations", text_anchor="middle"))
        top = 80.0
    return ('<?xml version="1.0" encoding="utf-8"?>\n'
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{lay.width:.0f}" '
            f'height="{top:.0f}" viewBox="0 0 {lay.width:.0f} {top:.0f}" '
            'font-family="DejaVu Sans, Arial, sans-serif" font-size="11" fill="#212121">\n'
            f'<rect width="{lay.width:.0f}" height="{top:.0f}" fill="#ffffff"/>\n'
            + "\n".join(body) + "\n</svg>\n")


def inline_svg(svg: str) -> str:
    """The SVG element alone, for embedding in HTML."""
    start = svg.find("<svg")
    body = svg[start:] if start >= 0 else svg
    # a metadata block (from other SVG writers) names creator URLs; the page needs none
    body = re.sub(r"<metadata>.*?</metadata>", "", body, flags=re.DOTALL)
    return body.strip()
