"""What the terminal summary says of a result's warnings and comparisons:
one line per kind of warning with a count (``--verbose``: every warning in
full), and no delta lines for a metric that is 0 in every condition (the
generation task's wrong-but-valid, whose correctness is validity itself)."""

from __future__ import annotations

import re
from collections import defaultdict

from conformbench.records.results import TaskModelResult

__all__ = ["always_zero_metrics", "warning_lines"]

#: conditions named in a grouped warning before "and N more"
LISTED = 4
_BUDGET = re.compile(r"^(?P<key>.+?): \d+ of \d+ answers \((?P<share>[\d.]+%)\) hit the token budget")
_BUDGET_ADVICE = ("rerun with a larger budget for that turn (only the cut answers are generated again) "
                  "to see whether they finish")


def _listed(names: list[str]) -> str:
    more = len(names) - LISTED
    return ", ".join(names[:LISTED]) + (f" and {more} more" if more > 0 else "")


def warning_lines(result: TaskModelResult, verbose: bool = False) -> list[str]:
    """The result's warnings for the terminal, indented under its heading."""
    if verbose:
        return [f"  warning: {w}" for w in result.warnings]
    cut: list[str] = []
    other: dict[str, list[str]] = defaultdict(list)
    for text in result.warnings:
        found = _BUDGET.match(text)
        if found:
            cut.append(f"{found['key']} {found['share']}")
            continue
        key, sep, rest = text.partition(": ")
        other[rest if sep else text].append(key if sep else "")
    lines = []
    if cut:
        what = "condition" if len(cut) == 1 else "conditions"
        lines.append(f"  warning: {len(cut)} {what} cut too many answers at the token budget ({_listed(cut)}): "
                     f"{_BUDGET_ADVICE}; --verbose or report.md for each")
    for rest, keys in other.items():
        named = [k for k in keys if k]
        count = f" ({len(named)} conditions: {_listed(named)})" if len(named) > 1 else ""
        lines.append(f"  warning: {named[0] + ': ' if len(named) == 1 else ''}{rest}{count}")
    return lines


def always_zero_metrics(result: TaskModelResult) -> set[str]:
    """Metrics whose rate is 0 in every condition of the result (their
    comparisons carry no information: the terminal leaves them out)."""
    zero = set()
    for metric in ("wrong_but_valid", "executable_accuracy"):
        rates = [getattr(arm, metric, None) for arm in result.arms]
        if rates and all(r is None or r.rate == 0 for r in rates):
            zero.add(metric)
    return zero
