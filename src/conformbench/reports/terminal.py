"""What the terminal summary says of a result: first each condition's rates
with their intervals and N (a table), then one line per kind of warning with
a count (``--verbose``: every warning in full); no column or delta for a
metric no condition measures or that is 0 by the task's definition (the
generation task's wrong-but-valid, whose correctness is validity itself).
A measured 0 is always shown."""

from __future__ import annotations

import re
from collections import defaultdict

from conformbench.records.results import TaskModelResult
from conformbench.reports.text import ARM_INTERVALS, cut_text, metric_label, rate_text
from conformbench.tasks.base import zero_by_definition

__all__ = ["RATE_METRICS", "rate_table_lines", "unmeasured_metrics", "warning_lines"]

#: the per-condition rates the terminal's table shows, in order
RATE_METRICS = ("validity", "accuracy", "wrong_but_valid")

#: conditions named in a grouped warning before "and N more"
LISTED = 4
_BUDGET = re.compile(r"^(?P<key>.+?): \d+ of \d+ answers \((?P<share>[\d.]+%)\) hit the token budget")
#: the advice closing a budget warning (scoring.score.budget_warnings): what to do about cut answers
_ADVICE = re.compile(r"hit the token budget \(over [\d.]+%\)[^:]*: (?P<advice>.+)$")


def _listed(names: list[str]) -> str:
    more = len(names) - LISTED
    return ", ".join(names[:LISTED]) + (f" and {more} more" if more > 0 else "")


def warning_lines(result: TaskModelResult, verbose: bool = False) -> list[str]:
    """The result's warnings for the terminal, indented under its heading."""
    if verbose:
        return [f"  warning: {w}" for w in result.warnings]
    cut: list[str] = []
    advice: dict[str, None] = {}
    other: dict[str, list[str]] = defaultdict(list)
    for text in result.warnings:
        found = _BUDGET.match(text)
        if found:
            cut.append(f"{found['key']} {found['share']}")
            said = _ADVICE.search(text)
            if said:  # a live run's advice (rerun with a larger budget), or an import's
                advice[said["advice"]] = None
            continue
        key, sep, rest = text.partition(": ")
        other[rest if sep else text].append(key if sep else "")
    lines = []
    if cut:
        what = "condition" if len(cut) == 1 else "conditions"
        lines.append(f"  warning: {len(cut)} {what} cut too many answers at the token budget ({_listed(cut)}): "
                     f"{'; '.join(advice) or 'see report.md'}; --verbose or report.md for each")
    for rest, keys in other.items():
        named = [k for k in keys if k]
        count = f" ({len(named)} conditions: {_listed(named)})" if len(named) > 1 else ""
        lines.append(f"  warning: {named[0] + ': ' if len(named) == 1 else ''}{rest}{count}")
    return lines


def unmeasured_metrics(result: TaskModelResult) -> set[str]:
    """Metrics no condition of the result measures (n/a in every one) or
    that are 0 by the task's definition (``Task.zero_by_definition``), which
    the terminal leaves out. A measured 0 stays: 0.0% [0.0, 49.0] at N = 4
    says how little was seen, and hiding it would read as "never happens"."""
    absent = set(zero_by_definition(result.task))
    for metric in ("wrong_but_valid", "executable_accuracy"):
        rates = [getattr(arm, metric, None) for arm in result.arms]
        if rates and all(r is None for r in rates):
            absent.add(metric)
    return absent


def rate_table_lines(result: TaskModelResult, hidden: set[str]) -> list[str]:
    """Each condition's rates with their 95% Wilson intervals, its N and its
    cut answers, as aligned columns (the first lines of a task's summary;
    ``hidden``: metrics left out)."""
    metrics = [m for m in RATE_METRICS if m not in hidden]
    header = ["condition", "N", *(metric_label(m, result.correctness_label) for m in metrics), "cut"]
    rows = [[arm.key, str(arm.n), *(rate_text(getattr(arm, m)) for m in metrics), cut_text(arm)]
            for arm in result.arms]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]

    def line(row: list[str]) -> str:
        cells = [cell.rjust(w) if i == 1 else cell.ljust(w) for i, (cell, w) in enumerate(zip(row, widths, strict=True))]
        return "  " + "  ".join(cells).rstrip()

    return [f"  rates [{ARM_INTERVALS}] over each condition's N; cut = answers that hit the token budget:",
            line(header), *(line(row) for row in rows)]
