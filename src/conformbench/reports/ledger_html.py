"""report.html's per-item ledger: one row per item, one column per condition.

A run with many conditions (the ConCodeEval generation job has 30) would
make one table far wider than the page; its columns are split into tables
that fit the page instead (by an estimate of each column's width: the
widest state badge or the label's longest unbreakable part), grouped by
what their labels share after the first ``/`` (``0shot/prompt_only[schema]``),
each column headed by the part that differs (``json->yaml``, the full label
in its tooltip). Every table lists every item, and the item column stays in
view if a narrow window scrolls a table sideways."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from html import escape

from conformbench.records.results import LedgerRow, TaskModelResult
from conformbench.reports.quadrants import STATE_COLOURS, ordered_arms
from conformbench.reports.text import samples_text

__all__ = ["LEDGER_CSS", "LedgerGroup", "column_px", "ledger_groups", "ledger_html"]

#: pixels the state columns of one table may take: the page is 1100 px wide
#: (at 1280 px), the item column about 110 (tests/reports/test_html_browser.py)
_BUDGET_PX = 960
#: a state column is at least as wide as its widest badge ("invalid/wrong ✂∞")
_BADGE_PX = 150
#: a label character (monospace at the table's font size) and a cell's padding
_CHAR_PX, _PAD_PX = 7.5, 16

LEDGER_CSS = """
table.ledger th.item{position:sticky;left:0;background:#fff;font-weight:400;white-space:nowrap}
table.ledger thead th.item{background:#f5f5f5;font-weight:600}h4.ledger{margin:1rem 0 .2rem}
table.ledger .samples{font-size:.8em;color:#555}
"""


@dataclass(frozen=True)
class LedgerGroup:
    """One ledger table: its heading ("" for a single table), the condition
    keys of its columns, what each column is headed with, and which part of
    its group it is ("2 of 3"; "" for a whole group)."""

    heading: str
    keys: tuple[str, ...]
    labels: tuple[str, ...]
    part: str = ""


def column_px(label: str) -> float:
    """The estimated width of a ledger column headed ``label``, which wraps
    only after a ``/`` and before an ``@`` (as ``_key`` lets it)."""
    longest = max(len(part) for part in re.split(r"(?<=/)|(?=@)", label))
    return max(_BADGE_PX, longest * _CHAR_PX + _PAD_PX)


def _chunks(labels: list[str]) -> list[range]:
    """Consecutive runs of columns that each fit the budget, as even as can be."""
    per_table = max(1, int(_BUDGET_PX // max(column_px(label) for label in labels)))
    size = math.ceil(len(labels) / math.ceil(len(labels) / per_table))
    return [range(i, min(i + size, len(labels))) for i in range(0, len(labels), size)]


def ledger_groups(keys: list[str]) -> list[LedgerGroup]:
    """The ledger's tables for conditions ``keys`` (in reading order)."""
    if sum(column_px(k) for k in keys) <= _BUDGET_PX:
        return [LedgerGroup("", tuple(keys), tuple(keys))]
    by_tail: dict[str, list[str]] = {}
    for key in keys:
        head, _, tail = key.partition("/")
        by_tail.setdefault(tail if head and tail else "", []).append(key)
    groups = []
    for tail, members in by_tail.items():
        labels = [k.partition("/")[0] for k in members] if tail else members
        parts = _chunks(labels)
        for n, part in enumerate(parts, 1):
            span = f"{n} of {len(parts)}" if len(parts) > 1 else ""
            groups.append(LedgerGroup(tail or "conditions", tuple(members[i] for i in part),
                                      tuple(labels[i] for i in part), span))
    return groups


def _key(key: str) -> str:
    """A condition label that wraps only between its parts (as html.py's)."""
    parts = escape(key).replace("/", "/<wbr>").replace("@", "<wbr>@")
    return f'<code class="key">{parts}</code>'


def _mark(truncated: bool, runaway: bool) -> str:
    return " ✂∞" if runaway else " ✂" if truncated else ""


def _state(state: str, row: LedgerRow, key: str) -> str:
    colour = STATE_COLOURS.get(state, "#9e9e9e")
    mark = _mark(key in row.truncated, key in row.runaway)
    cell = f'<span class="st" style="background:{colour}">{escape(state)}{mark}</span>'
    samples = samples_text(row, key)
    return f'{cell}<br><span class="samples">{escape(samples)}</span>' if samples else cell


def _table(group: LedgerGroup, rows: list[LedgerRow]) -> str:
    head = '<th class="item">item</th>' + "".join(
        f'<th title="{escape(k)}">{_key(label)}</th>' for k, label in zip(group.keys, group.labels, strict=True))
    body = "".join(
        f'<tr><th class="item" scope="row">{escape(r.item_id)}</th>'
        + "".join(f"<td>{_state(r.states.get(k, ''), r, k)}</td>" for k in group.keys) + "</tr>"
        for r in rows)
    part = f' <span class="role">({escape(group.part)})</span>' if group.part else ""
    heading = f'<h4 class="ledger">{_key(group.heading)}{part}</h4>' if group.heading else ""
    return (f'{heading}<div class="wide"><table class="ledger"><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>")


def ledger_html(result: TaskModelResult) -> str:
    """The folded ledger section: one table, or one per condition group."""
    keys = [a.key for a in ordered_arms(result)]
    groups = ledger_groups(keys)
    tables = "".join(_table(g, result.ledger) for g in groups)
    split = f" × {len(keys)} conditions, in {len(groups)} tables that fit the page" if len(groups) > 1 else ""
    return (f"<details><summary>Per-item ledger ({len(result.ledger)} items{split}; "
            f"✂ = hit max_tokens; ✂∞ = cut inside a runaway number sequence)</summary>{tables}</details>")
