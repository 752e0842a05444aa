"""Presentation helpers of the ConCodeEval sections: small matplotlib (Agg)
figures returned as self-contained ``<img>`` tags with base64 PNG data (no
external URLs, no script; PNG rather than inline SVG so ids of several
figures never clash), and the sections' Markdown turned into HTML by
markdown-it-py (installed with rich).

matplotlib is imported where a figure is drawn, not with this module: it
costs about 0.3 s, and scoring, report.md and the CLI's start need none."""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from markdown_it import MarkdownIt

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["bars", "heatmap", "markdown_html"]

#: no raw HTML, and no link, image, autolink or link reference: report.html
#: references nothing outside itself, whatever a label or build string holds
#: (``![x](http://...)`` from a replay stays text)
_MARKDOWN = MarkdownIt("commonmark", {"html": False}).enable("table").disable(
    ["link", "image", "autolink", "reference"])


def _subplots(figsize: tuple[float, float]) -> tuple[Figure, Axes]:
    """A figure on the Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=figsize)
    return fig, ax


def _img(fig: Figure, alt: str) -> str:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    # no Software/date metadata: the same data gives the same bytes
    fig.savefig(buf, format="png", dpi=96, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'


def heatmap(
    values: Sequence[Sequence[float | None]],
    rows: Sequence[str],
    cols: Sequence[str],
    title: str,
    *,
    percent: bool = True,
    cmap: str = "viridis",
    axes: tuple[str, str] = ("", ""),
) -> str:
    """A labelled heatmap; None cells are left blank. ``percent`` shows
    rates in [0, 1] as percentages on a fixed 0-100 scale; ``axes`` names
    the (x, y) axes."""
    grid = np.array([[np.nan if v is None else v for v in row] for row in values], dtype=float)
    shown = grid * 100 if percent else grid
    fig, ax = _subplots((1.2 + 1.1 * len(cols), 0.8 + 0.5 * len(rows)))
    finite = shown[np.isfinite(shown)]
    vmax = 100.0 if percent else (float(finite.max()) if finite.size else 1.0)
    image = ax.imshow(shown, cmap=cmap, vmin=0.0, vmax=max(vmax, 1e-9), aspect="auto")
    ax.set_xticks(range(len(cols)), labels=list(cols))
    ax.set_yticks(range(len(rows)), labels=list(rows))
    ax.set_title(title, fontsize=10)
    ax.set_xlabel(axes[0], fontsize=9)
    ax.set_ylabel(axes[1], fontsize=9)
    for (r, c), v in np.ndenumerate(shown):
        if np.isfinite(v):
            text = f"{v:.1f}" if percent else f"{v:g}"
            light = v < 0.6 * vmax
            ax.text(c, r, text, ha="center", va="center", fontsize=8,
                    color="white" if light else "black")
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    return _img(fig, title)


def bars(labels: Sequence[str], values: Sequence[float], title: str) -> str:
    """Horizontal bars, largest first as given."""
    fig, ax = _subplots((6, 0.6 + 0.3 * max(1, len(labels))))
    ax.barh(range(len(labels)), list(values), color="#c0504d")
    ax.set_yticks(range(len(labels)), labels=list(labels))
    ax.invert_yaxis()
    ax.set_title(title, fontsize=10)
    for n, v in enumerate(values):
        ax.text(v, n, f" {v:g}", va="center", fontsize=8)
    return _img(fig, title)


def markdown_html(markdown: str) -> str:
    """Markdown as HTML by markdown-it-py (CommonMark with pipe tables); raw
    HTML is escaped, never passed through, and links and images stay text:
    labels, item ids and build strings are user data."""
    return str(_MARKDOWN.render(markdown))
