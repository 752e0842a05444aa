"""report.html: one self-contained page (inline CSS and SVG, no scripts,
no external URLs), rendered from a ScoredRun alone."""

from __future__ import annotations

import json
from html import escape
from typing import Any

from conformbench.records.markdown_escape import plain_text
from conformbench.records.results import Rate, ScoredRun, SectionResult, TaskModelResult
from conformbench.reports.ledger_html import LEDGER_CSS, ledger_html
from conformbench.reports.quadrants import inline_svg, ordered_arms, quadrants_svg
from conformbench.reports.text import (
    ARM_INTERVALS,
    ComparisonLine,
    comparison_lines,
    comparisons_heading,
    cut_text,
    facts,
    format_mode_text,
    n_line,
    pct,
    role_text,
    share_text,
    source_line,
)
from conformbench.reports.verdict import verdict_html
from conformbench.scoring.percent import pct_bare
from conformbench.scoring.sections import run_sections, sections

__all__ = ["render_html"]

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;
max-width:1100px;padding:0 1rem;color:#212121;line-height:1.45}
h1{font-size:1.6rem}h2{border-bottom:2px solid #e0e0e0;padding-bottom:.2rem;margin-top:2.2rem}
table{border-collapse:collapse;margin:.6rem 0;font-size:.88rem}
th,td{border:1px solid #e0e0e0;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#f5f5f5}td.num{text-align:right;font-variant-numeric:tabular-nums}
.null{color:#616161}.effect{font-weight:600}.role{color:#616161;font-size:.85rem}
details{margin:.6rem 0}summary{cursor:pointer;font-weight:600}
ul.verdicts>li{list-style:none;margin:.4rem 0}.headline{font-size:1.05rem;margin:.2rem 0}
ul.verdicts details{margin:.1rem 0 .6rem}ul.verdicts summary{font-weight:400;color:#616161;font-size:.88rem}
.st{color:#fff;padding:0 .3rem;border-radius:3px;white-space:nowrap}
.plot svg{max-width:100%;height:auto}.wide{overflow-x:auto}
.ci{color:#616161;font-size:.8rem;white-space:nowrap}code{background:#f5f5f5;padding:0 .2rem}
code.key{white-space:nowrap}table.arms{font-size:.8rem}table.arms th{font-weight:600}
""" + LEDGER_CSS


def _table(header: list[str], rows: list[list[str]], css: str = "") -> str:
    """Cells are HTML already (escape before calling)."""
    head = "".join(f"<th>{h}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    cls = f' class="{css}"' if css else ""
    return (f'<div class="wide"><table{cls}><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>")


def _key(key: str) -> str:
    """A condition label that wraps only between its parts (after a ``/``
    or before an ``@``), never inside ``->`` or a bracket."""
    parts = escape(key).replace("/", "/<wbr>").replace("@", "<wbr>@")
    return f'<code class="key">{parts}</code>'


def _rate(rate: Rate | None, missing: str = "n/a") -> str:
    if rate is None:
        return f'<span class="null">{missing}</span>'
    lo, hi = rate.ci95
    return f'{pct(rate.rate)}<br><span class="ci">[{pct_bare(lo)}, {pct_bare(hi)}]</span>'


def _arms(result: TaskModelResult) -> str:
    """The conditions table; a column no condition has a value in (executable
    accuracy outside BFCL) is left out, so the table fits a 1280 px window."""
    executable = any(a.executable_accuracy is not None for a in result.arms)
    header = ["condition", "schema validity", escape(result.correctness_label), "wrong-but-valid",
              *(["executable accuracy"] if executable else []),
              "valid/ right", "valid/ wrong", "invalid/ right", "invalid/ wrong", "N", "cut", "looped", "errors"]
    rows = []
    for a in ordered_arms(result):
        q = a.quadrants
        counts = ["n/a"] * 4 if q is None else [str(q.valid_right), str(q.valid_wrong),
                                                str(q.invalid_right), str(q.invalid_wrong)]
        rows.append([_key(a.key), _rate(a.validity), _rate(a.accuracy), _rate(a.wrong_but_valid),
                     *([_rate(a.executable_accuracy, "not computed")] if executable else []), *counts,
                     str(a.n), cut_text(a), share_text(a.looped, a.n), str(a.errors)])
    note = f'<p class="role">Rates with {ARM_INTERVALS} intervals in brackets.</p>'
    return note + _table(header, rows, "arms")


def _comparison_item(line: ComparisonLine) -> str:
    text = escape(line.text)
    if line.effect is not None:
        text = f'<span class="{"effect" if line.effect else "null"}">{text}</span>'
    return f"<li>{escape(line.label)}: {text}</li>"


def _comparisons(result: TaskModelResult, bootstrap: dict[str, int]) -> str:
    if not result.comparisons:
        return "<p>No paired comparisons in this task.</p>"
    parts = [f'<p class="role">{escape(comparisons_heading(bootstrap))}</p>']
    for c in result.comparisons:
        items = [_comparison_item(line) for line in comparison_lines(c, result.correctness_label)]
        parts.append(f"<h4>{_key(c.from_key)} → {_key(c.to_key)}"
                     f' <span class="role">({escape(role_text(c))}; N={c.n})</span>'
                     f"</h4><ul>{''.join(items)}</ul>")
    return "".join(parts)


def _exclusions(result: TaskModelResult) -> str:
    if not result.exclusions:
        return "<p>None.</p>"
    rows = [[escape(e.item_id), escape(e.condition or ""), escape(e.reason)]
            for e in result.exclusions]
    return ("<p>Left out of the conditions listed, and only those (every comparison is over "
            "the items both its conditions have):</p>" + _table(["item", "condition", "reason"], rows))


def _section(section: SectionResult, run_level: bool = False) -> str:
    registry = run_sections if run_level else sections
    if section.name in registry:
        impl = registry.get(section.name)()
        body = impl.html(impl.load(section.data))
    else:
        body = f"<pre>{escape(json.dumps(section.data, indent=2))}</pre>"
    heading = "h2" if run_level else "h3"
    return f"<{heading}>{escape(section.title)}</{heading}>{body}"


def _result(result: TaskModelResult, bootstrap: dict[str, int]) -> str:
    return (f"<h2>{escape(result.task)} on {escape(result.model)}</h2>"
            f"<p>{escape(n_line(result))}</p>"
            + "".join(f'<p class="warning"><b>Warning:</b> {escape(w)}</p>' for w in result.warnings)
            + f'<p class="role">Task: {escape(facts(result.task_info))}</p>'
            f"<h3>Conditions</h3>{_arms(result)}"
            f"<h3>Comparisons</h3>{_comparisons(result, bootstrap)}"
            f"<h3>Exclusions</h3>{_exclusions(result)}"
            + "".join(_section(s) for s in result.sections)
            + f"<h3>Ledger</h3>{ledger_html(result)}")


def _scalars(meta: dict[str, Any]) -> str:
    return escape(", ".join(f"{k}={v}" for k, v in meta.items()
                            if isinstance(v, (str, int, float, bool))) or "-")


def _metadata(run: ScoredRun) -> str:
    items = []
    for src in run.replays:
        models = "".join(
            f"<li>model {escape(str(m.get('label')))} ({escape(str(m.get('backend')))}): "
            f"{_scalars(m.get('metadata', {}))}; canary: "
            # _scalars escapes its values: the canary text is escaped once, never twice
            + ("; ".join(f"{escape(str(e))}: {_scalars(v)}" for e, v in m.get("canary", {}).items())
               or "none") + "</li>"
            for m in src.models)
        # a pool's answers, server by server
        made = "".join(f"<li>answers made by {escape(where)}: {n}</li>" for where, n in src.servers.items())
        items.append(f"<li>replay: {escape(source_line(src))}<ul>"
                     f"<li>decoding: {_scalars(src.spec.get('decoding', {}))}</li>"
                     f"<li>hardware: {_scalars(src.hardware)}</li>{models}{made}</ul></li>")
    boot = run.bootstrap
    items.append(f"<li>paired bootstrap: {boot.get('resamples')} resamples, seed "
                 f"{boot.get('seed')}; exact McNemar tests on discordant pairs</li>")
    return f"<h2>Run metadata</h2><ul>{''.join(items)}</ul>"


def render_html(run: ScoredRun, svg: str | None = None) -> str:
    """The page. Every field is escaped where it is placed; the page as a
    whole then passes through ``plain_text``, so a control character or bidi
    override from any field (a label, a build string, a section's data) is
    shown as its escape (``\\x1b``), never sent raw (issue #49): the page's
    own text has none but its line breaks."""
    return plain_text(_page(run, svg))


def _page(run: ScoredRun, svg: str | None) -> str:
    plot = inline_svg(svg if svg is not None else quadrants_svg(run))
    body = "".join(_result(r, run.bootstrap) for r in run.results) or "<p>No scored generations.</p>"
    body += "".join(_section(s, run_level=True) for s in run.sections)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>conformbench report</title><style>{_CSS}</style></head><body>"
            f"<h1>conformbench report</h1>{verdict_html(run)}"
            f'<p class="role">{escape(format_mode_text(run.format_mode))}</p>'
            "<h2>Validity × correctness per condition</h2>"
            f'<div class="plot">{plot}</div>{body}{_metadata(run)}</body></html>\n')
