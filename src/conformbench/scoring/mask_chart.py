"""The chart of the mask's toll (issue #53): per constrained arm and per
group of answers (right, wrong but valid, invalid; valid without a gold
answer), the distribution over the answers of each answer's mean allowed
share (a box from the 25th to the 75th percentile, whiskers from the 10th
to the 90th, a tick at the median), the mean with its 95% interval (a
dot and a bar) and the mean of each answer's smallest share with its
interval (a hollow diamond). Drawn from the section's data alone
(``TollData``, defined here and computed by ``scoring.mask_section``), so ``score`` redraws it from the
replay; written as SVG text, as reports/quadrants.py draws its figure (no
plotting library, the same bytes for the same data, no ids: it is inlined
in report.html and written as mask_toll.svg)."""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

from pydantic import BaseModel

from conformbench.records.markdown_escape import plain_text

__all__ = ["GROUP_COLOURS", "TollArm", "TollData", "TollGroup", "toll_panel", "toll_svg"]

#: the colours of the quadrants figure's states (reports/quadrants.py)
GROUP_COLOURS = {"right": "#2e7d32", "wrong but valid": "#c62828", "valid": "#81c784", "invalid": "#757575"}
_CHAR_W, _ROW_H, _PLOT_W, _TITLE_H, _AXIS_H, _LEGEND_H = 6.6, 24.0, 420.0, 28.0, 40.0, 24.0
_SVG_OPEN = ('<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0f}" height="{h:.0f}" viewBox="0 0 {w:.0f} {h:.0f}" '
             'font-family="DejaVu Sans, Arial, sans-serif" font-size="11" fill="#212121">')


class TollGroup(BaseModel):
    """One group of an arm's answers (right, wrong but valid, ...); an empty
    group (n = 0) has no means and no intervals: None (n/a), never 0.0."""

    group: str
    n: int
    #: mean over the items of each item's mean allowed share, and its interval
    mean_share: float | None
    mean_share_ci95: tuple[float, float] | None
    #: mean over the items of each item's smallest allowed share
    min_share: float | None
    min_share_ci95: tuple[float, float] | None
    #: items where the model's own top token was refused at least once
    refused_items: int
    refused_items_ci95: tuple[float, float] | None
    #: mean steps per item, and mean steps per item with the top token refused
    steps: float | None
    refused_steps: float | None
    #: median of the first refused step over the items with one
    first_refused_step: float | None
    #: the most frequent places of the first refusal, with their counts
    first_refused_at: list[tuple[str, int]]
    #: the distribution over the items of each item's mean share: its 10th,
    #: 25th, 50th, 75th and 90th percentiles (the chart's box; empty in
    #: reports made before the chart)
    quantiles: list[float] = []


class TollArm(BaseModel):
    key: str
    engine: str | None
    #: rows of the arm, and those with a measured toll
    n: int
    measured: int
    #: why the arm has no figures (None: it has)
    na: str | None = None
    #: the steps the figures are over: "call" (every masked step),
    #: "answer" (a thinking arm's steps after its stop string) or "thinking
    #: and answer" (a thinking arm's replay made before the answer part)
    part: str = "call"
    groups: list[TollGroup] = []


class TollData(BaseModel):
    arms: list[TollArm]


def _text(x: float, y: float, body: str, **attrs: str) -> str:
    extra = "".join(f" {k.replace('_', '-')}={quoteattr(v)}" for k, v in attrs.items())
    return f'<text x="{x:.1f}" y="{y:.1f}"{extra}>{escape(plain_text(body))}</text>'


def _tip(body: str) -> str:
    """A tooltip's text: a label read from a replay, controls as escapes (XML 1.0 forbids them raw)."""
    return escape(plain_text(body))


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def _label(arm: TollArm) -> str:
    return arm.key + (f" ({arm.part})" if arm.part != "call" else "")


def _rows(data: TollData) -> list[tuple[TollArm, TollGroup | None]]:
    """One row per group shown (``all`` is the table's), one per arm without figures."""
    rows: list[tuple[TollArm, TollGroup | None]] = []
    for arm in data.arms:
        groups = [g for g in arm.groups if g.group != "all" and g.n]  # an empty group has nothing to draw
        rows += [(arm, g) for g in groups] if groups else [(arm, None)]
    return rows


class _Geometry:
    def __init__(self, data: TollData) -> None:
        longest = max((len(_label(a)) for a in data.arms), default=10)
        self.label_w = min(longest * _CHAR_W + 16, 380.0)
        self.group_w = 16 * _CHAR_W
        self.left = self.label_w + self.group_w
        self.width = self.left + _PLOT_W + 24
        self.rows = len(_rows(data))

    @property
    def height(self) -> float:
        return _TITLE_H + max(self.rows, 1) * _ROW_H + _AXIS_H + _LEGEND_H

    def x(self, share: float) -> float:
        return self.left + _PLOT_W * min(max(share, 0.0), 1.0)


def _group_marks(geo: _Geometry, y: float, arm: TollArm, g: TollGroup) -> list[str]:
    colour = GROUP_COLOURS.get(g.group, "#9e9e9e")
    mid = y + _ROW_H / 2
    who = f"{_label(arm)}, {g.group} (N={g.n})"
    out = []
    if len(g.quantiles) == 5:
        p10, p25, p50, p75, p90 = g.quantiles
        tip = _tip(f"{who}: answers' mean share p10 {_pct(p10)}, p25 {_pct(p25)}, median {_pct(p50)}, "
                     f"p75 {_pct(p75)}, p90 {_pct(p90)}")
        out += [f'<line x1="{geo.x(p10):.1f}" y1="{mid:.1f}" x2="{geo.x(p90):.1f}" y2="{mid:.1f}" '
                f'stroke="{colour}"/>',
                f'<rect x="{geo.x(p25):.1f}" y="{y + 5:.1f}" width="{geo.x(p75) - geo.x(p25):.1f}" '
                f'height="{_ROW_H - 10:.1f}" fill="{colour}" fill-opacity="0.25" stroke="{colour}">'
                f"<title>{tip}</title></rect>",
                f'<line x1="{geo.x(p50):.1f}" y1="{y + 5:.1f}" x2="{geo.x(p50):.1f}" y2="{y + _ROW_H - 5:.1f}" '
                f'stroke="{colour}" stroke-width="2"/>']
    if g.min_share is None or g.min_share_ci95 is None or g.mean_share is None or g.mean_share_ci95 is None:
        return out  # an empty group (never drawn: see the rows)
    low, high = g.min_share_ci95
    xm, ym = geo.x(g.min_share), mid + 5
    tip = _tip(f"{who}: mean smallest share {_pct(g.min_share)} [{_pct(low)}, {_pct(high)}]")
    out += [f'<line x1="{geo.x(low):.1f}" y1="{ym:.1f}" x2="{geo.x(high):.1f}" y2="{ym:.1f}" stroke="#212121" '
            'stroke-dasharray="3,2"/>',
            f'<path d="M{xm:.1f},{ym - 4:.1f} L{xm + 4:.1f},{ym:.1f} L{xm:.1f},{ym + 4:.1f} L{xm - 4:.1f},{ym:.1f} Z" '
            f'fill="#ffffff" stroke="#212121"><title>{tip}</title></path>']
    low, high = g.mean_share_ci95
    tip = _tip(f"{who}: mean allowed share {_pct(g.mean_share)} [{_pct(low)}, {_pct(high)}]")
    return out + [
        f'<line x1="{geo.x(low):.1f}" y1="{mid - 4:.1f}" x2="{geo.x(high):.1f}" y2="{mid - 4:.1f}" '
        'stroke="#212121" stroke-width="2"/>',
        f'<circle cx="{geo.x(g.mean_share):.1f}" cy="{mid - 4:.1f}" r="4" fill="{colour}" stroke="#212121">'
        f"<title>{tip}</title></circle>"]


def _grid(geo: _Geometry, top: float, bottom: float) -> list[str]:
    return [f'<line x1="{geo.x(k / 4):.1f}" y1="{top:.1f}" x2="{geo.x(k / 4):.1f}" y2="{bottom + 4:.1f}" '
            'stroke="#eeeeee"/>' for k in range(5)]


def _axis(geo: _Geometry, y: float) -> list[str]:
    out = [f'<line x1="{geo.left:.1f}" y1="{y:.1f}" x2="{geo.x(1.0):.1f}" y2="{y:.1f}" stroke="#212121"/>']
    out += [_text(geo.x(k / 4), y + 16, f"{25 * k}%", text_anchor="middle") for k in range(5)]
    return out + [_text(geo.left + _PLOT_W / 2, y + 32, "allowed share of the model's probability",
                        text_anchor="middle")]


def _legend(geo: _Geometry, y: float) -> list[str]:
    x = max(8.0, geo.width - 530.0)
    return [f'<circle cx="{x + 4:.1f}" cy="{y:.1f}" r="4" fill="#bdbdbd" stroke="#212121"/>',
            _text(x + 12, y + 4, "mean share [95% CI]"),
            f'<path d="M{x + 144:.1f},{y - 4:.1f} L{x + 148:.1f},{y:.1f} L{x + 144:.1f},{y + 4:.1f} '
            f'L{x + 140:.1f},{y:.1f} Z" fill="#ffffff" stroke="#212121"/>',
            _text(x + 154, y + 4, "smallest share [95% CI]"),
            f'<rect x="{x + 300:.1f}" y="{y - 5:.1f}" width="14" height="10" fill="#bdbdbd" fill-opacity="0.5" '
            'stroke="#757575"/>', _text(x + 318, y + 4, "answers: p10-p25-p50-p75-p90")]


def toll_panel(data: TollData, title: str, top: float = 0.0) -> tuple[list[str], float, float]:
    """The chart's elements placed from ``top``, its width and its height."""
    geo = _Geometry(data)
    out = [_text(geo.width / 2, top + 18, title, text_anchor="middle", font_size="13")]
    y = top + _TITLE_H
    out += _grid(geo, y, y + geo.rows * _ROW_H)
    seen: set[str] = set()
    for arm, group in _rows(data):
        if arm.key not in seen:
            seen.add(arm.key)
            out += [_text(geo.label_w - 8, y + _ROW_H / 2 + 4, _label(arm), text_anchor="end"),
                    f'<line x1="0" y1="{y:.1f}" x2="{geo.width:.1f}" y2="{y:.1f}" stroke="#e0e0e0"/>']
        if group is None:
            out.append(_text(geo.left, y + _ROW_H / 2 + 4, arm.na or "no answers"))
        elif not group.n:
            out.append(_text(geo.label_w, y + _ROW_H / 2 + 4, f"{group.group}: no answers"))
        else:
            out.append(_text(geo.label_w, y + _ROW_H / 2 + 4, f"{group.group} ({group.n})"))
            out += _group_marks(geo, y, arm, group)
        y += _ROW_H
    out += _axis(geo, y) + _legend(geo, y + _AXIS_H + _LEGEND_H / 2 - 4)
    return out, geo.width, geo.height


def toll_svg(panels: list[tuple[str, TollData]], standalone: bool = True) -> str:
    """One SVG of a panel per (title, data), stacked; ``standalone``: a
    file (with its XML declaration), else the element for inlining."""
    body: list[str] = []
    width = top = 0.0
    for title, data in panels:
        parts, w, h = toll_panel(data, title, top)
        body += parts
        width, top = max(width, w), top + h
    head = '<?xml version="1.0" encoding="utf-8"?>\n' if standalone else ""
    return (head + _SVG_OPEN.format(w=width, h=top) + "\n"
            f'<rect width="{width:.0f}" height="{top:.0f}" fill="#ffffff"/>\n' + "\n".join(body) + "\n</svg>\n")
