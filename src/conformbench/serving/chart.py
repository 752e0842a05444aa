"""latency.svg of ``engines cost``: median TTFT and TPOT against the
concurrency level, a line per arm (grammar off, on with a warm cache, on
with a cold one). Written as SVG text, as reports/quadrants.py draws its
figure: a few lines need no plotting library, and the bytes are the same
for the same report."""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

from conformbench.serving.report import ArmStats, CostReport

__all__ = ["ARM_COLOURS", "latency_svg"]

ARM_COLOURS = {"off": "#1565c0", "warm": "#2e7d32", "cold": "#c62828"}
_LABELS = {"off": "grammar off", "warm": "grammar on, warm cache", "cold": "grammar on, cold cache"}
_W, _H, _LEFT, _TOP, _PLOT_W, _PLOT_H, _GAP = 880.0, 330.0, 60.0, 40.0, 280.0, 220.0, 60.0


def _text(x: float, y: float, body: str, **attrs: str) -> str:
    extra = "".join(f" {k.replace('_', '-')}={quoteattr(v)}" for k, v in attrs.items())
    return f'<text x="{x:.1f}" y="{y:.1f}"{extra}>{escape(body)}</text>'


def _nice_top(value: float) -> float:
    """A round axis top at or above ``value``."""
    if value <= 0:
        return 1.0
    step = 10 ** len(str(int(value))) / 10 if value >= 1 else 0.1
    while step * 10 < value:
        step *= 10
    for m in (1, 2, 2.5, 5, 10):
        if m * step >= value:
            return m * step
    return 10 * step


def _panel(x0: float, title: str, levels: list[int], series: dict[str, list[float | None]]) -> list[str]:
    top = _nice_top(max((v for vs in series.values() for v in vs if v is not None), default=1.0) * 1.05)
    bottom = _TOP + _PLOT_H

    def px(i: int) -> float:
        return x0 + (_PLOT_W * (i + 0.5) / len(levels))

    def py(v: float) -> float:
        return bottom - _PLOT_H * v / top

    out = [_text(x0 + _PLOT_W / 2, _TOP - 14, title, text_anchor="middle", font_weight="bold"),
           f'<line x1="{x0:.1f}" y1="{bottom:.1f}" x2="{x0 + _PLOT_W:.1f}" y2="{bottom:.1f}" stroke="#212121"/>',
           f'<line x1="{x0:.1f}" y1="{_TOP:.1f}" x2="{x0:.1f}" y2="{bottom:.1f}" stroke="#212121"/>']
    for k in range(5):
        v = top * k / 4
        out += [f'<line x1="{x0:.1f}" y1="{py(v):.1f}" x2="{x0 + _PLOT_W:.1f}" y2="{py(v):.1f}" stroke="#eeeeee"/>',
                _text(x0 - 6, py(v) + 4, f"{v:.4g}", text_anchor="end")]
    for i, level in enumerate(levels):
        out.append(_text(px(i), bottom + 16, str(level), text_anchor="middle"))
    out.append(_text(x0 + _PLOT_W / 2, bottom + 34, "concurrency", text_anchor="middle"))
    for arm, values in series.items():
        points = [(px(i), py(v)) for i, v in enumerate(values) if v is not None]
        colour = ARM_COLOURS.get(arm, "#757575")
        if len(points) > 1:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
            out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        out += [f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{colour}"/>' for x, y in points]
    return out


def _series(arms: list[ArmStats], levels: list[int], pick: str) -> dict[str, list[float | None]]:
    by = {(a.concurrency, a.arm): a for a in arms}
    names = [n for n in ARM_COLOURS if any(a.arm == n for a in arms)]
    out: dict[str, list[float | None]] = {}
    for name in names:
        stat = [by.get((level, name)) for level in levels]
        out[name] = [None if s is None else getattr(s, pick).p50_ms for s in stat]
    return out


def latency_svg(report: CostReport) -> str:
    levels = sorted({a.concurrency for a in report.arms})
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W:.0f}" height="{_H:.0f}" '
             f'viewBox="0 0 {_W:.0f} {_H:.0f}" font-family="sans-serif" font-size="11">',
             f'<rect width="{_W:.0f}" height="{_H:.0f}" fill="#ffffff"/>']
    parts += _panel(_LEFT, "TTFT p50 (ms)", levels, _series(report.arms, levels, "ttft"))
    parts += _panel(_LEFT + _PLOT_W + _GAP, "TPOT p50 (ms)", levels, _series(report.arms, levels, "tpot"))
    legend_x = _LEFT + 2 * _PLOT_W + _GAP + 16
    for row, arm in enumerate(n for n in ARM_COLOURS if any(a.arm == n for a in report.arms)):
        y = _TOP + 10 + row * 20
        parts += [f'<rect x="{legend_x:.1f}" y="{y - 9:.1f}" width="12" height="12" fill="{ARM_COLOURS[arm]}"/>',
                  _text(legend_x + 18, y + 1, _LABELS[arm])]
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
