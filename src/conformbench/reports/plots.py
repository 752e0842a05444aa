"""Plots as SVG text (matplotlib, Agg backend, deterministic output)."""

from __future__ import annotations

import io
import re
from collections import Counter

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402

from conformbench.reports.text import STATE_ORDER  # noqa: E402
from conformbench.scoring.results import ScoredRun, TaskModelResult  # noqa: E402

__all__ = ["quadrants_svg", "inline_svg", "STATE_COLOURS"]

STATE_COLOURS = {
    "valid/right": "#2e7d32",
    "valid/wrong": "#c62828",  # the red cell: wrong behind a valid format
    "invalid/right": "#f9a825",
    "invalid/wrong": "#757575",
    "n/a/right": "#81c784",
    "n/a/wrong": "#bdbdbd",
}
_OTHER = "#e0e0e0"


def _counts(result: TaskModelResult) -> dict[str, Counter[str]]:
    counts: dict[str, Counter[str]] = {a.key: Counter() for a in result.arms}
    for row in result.ledger:
        for key, state in row.states.items():
            counts.setdefault(key, Counter())[state] += 1
    return counts


def _panel(ax: Axes, result: TaskModelResult) -> set[str]:
    counts = _counts(result)
    keys = list(counts)
    used: set[str] = set()
    for y, key in enumerate(keys):
        left = 0
        states = [s for s in STATE_ORDER if counts[key][s]]
        states += sorted(s for s in counts[key] if s not in STATE_ORDER)
        for state in states:
            width = counts[key][state]
            ax.barh(y, width, left=left, color=STATE_COLOURS.get(state, _OTHER),
                    edgecolor="white", label=state if state not in used else None)
            used.add(state)
            left += width
    ax.set_yticks(range(len(keys)), labels=keys, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, max(result.n, 1))
    ax.set_xlabel(f"items (N={result.n})")
    ax.set_title(f"{result.task} on {result.model}: validity × {result.correctness_label}",
                 fontsize=10)
    return used


def quadrants_svg(run: ScoredRun) -> str:
    """One horizontal stacked bar per condition (valid/invalid x right/wrong
    counts over all items), one panel per task and model."""
    results = run.results or []
    heights = [0.45 * max(len(r.arms), 1) + 1.2 for r in results] or [1.5]
    with plt.rc_context({"svg.hashsalt": "conformbench", "svg.fonttype": "none"}):
        fig, axes = plt.subplots(len(heights), 1, figsize=(9, sum(heights)),
                                 gridspec_kw={"height_ratios": heights}, squeeze=False)
        for ax, result in zip(axes[:, 0], results):
            used = _panel(ax, result)
            if used:
                ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8,
                          frameon=False)
        if not results:
            axes[0, 0].text(0.5, 0.5, "no scored generations", ha="center")
            axes[0, 0].set_axis_off()
        fig.tight_layout()
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None})
        plt.close(fig)
    return buf.getvalue()


def inline_svg(svg: str) -> str:
    """The SVG element alone, for embedding in HTML."""
    start = svg.find("<svg")
    body = svg[start:] if start >= 0 else svg
    # the metadata block names creator URLs; the page needs none
    body = re.sub(r"<metadata>.*?</metadata>", "", body, flags=re.DOTALL)
    return body.strip()
