"""The terminal's table of ``engines probe`` and the legend under it
(engines.md has its own: audits/probe/markdown.py)."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from conformbench.audits.probe.markdown import (
    MODE_COLUMNS,
    TOOLS_LEGEND,
    is_tools_probe,
    mode_label,
    tools_probe_rows,
    verdict_cell,
)
from conformbench.audits.probe.records import ProbeReport
from conformbench.records.generation import constraint_label

__all__ = ["PROBE_LEGEND", "probe_table"]


def probe_table(report: ProbeReport) -> tuple[Table, tuple[str, ...]]:
    """The table for the report (an engines probe or a tools probe) and its legend's lines."""
    return (_tools_table(report), TOOLS_LEGEND) if is_tools_probe(report) else (_probe_table(report), PROBE_LEGEND)


def _probe_table(report: ProbeReport) -> Table:
    """A row per keyword, a column per engine (as engines.md): twenty keyword
    columns cannot fit a terminal, a log's 80 columns least of all."""
    summary = Table("keyword", *(constraint_label(p.engine, p.output_format) for p in report.engines))
    verdicts = [{k.keyword: verdict_cell(k) for k in p.keywords} for p in report.engines]
    for name in dict.fromkeys(k.keyword for p in report.engines for k in p.keywords):
        summary.add_row(name, *(by_keyword.get(name, "-") for by_keyword in verdicts))
    return summary


def _tools_table(report: ProbeReport) -> Table:
    """engines.md's tools table turned a quarter: a row per keyword (after
    the canary's), a column per mode, headed with its tool_choice and strict."""
    header, rows = tools_probe_rows(report)
    table = Table("keyword", *(escape(mode_label(p)) for p in report.engines))
    for i, name in enumerate(header[len(MODE_COLUMNS):], start=len(MODE_COLUMNS)):
        table.add_row(escape(name), *(escape(row[i]) for row in rows))
    return table


#: printed under the terminal table (engines.md has its own), a line per verdict so
#: that it fits a log's 80 columns as the table does
PROBE_LEGEND = (
    "enforced (k/n held): none of the n judged outputs broke the keyword",
    "  (evidence on n attempts, not proof)",
    "ignored (k/n broke): k outputs broke it and the engine let them through",
    "refused: the engine would not compile the schema",
    "inconclusive: no output could be judged (cut, unparsable, an error)",
    "  or the canary failed",
    "unavailable: the engine is not installed",
    "not enforced (server): the server dropped the keyword",
    "Each sample is in engines.json.",
)
