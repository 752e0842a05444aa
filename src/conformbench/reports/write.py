"""Writing every report file of a ScoredRun, and reading report.json back."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, replace
from pathlib import Path

from pydantic import ValidationError

from conformbench.errors import UsageError
from conformbench.files import read_text_file, write_files
from conformbench.records.markdown_escape import plain_text
from conformbench.records.results import REPORT_FORMAT, ScoredRun
from conformbench.reports.html import render_html
from conformbench.reports.markdown import render_markdown
from conformbench.reports.quadrants import quadrants_svg
from conformbench.scoring.mask_chart import toll_svg
from conformbench.scoring.mask_section import CHART_FILE, TollSection

__all__ = ["ReportFiles", "csv_cell", "ledger_csv", "load_report", "toll_chart", "write_reports"]


@dataclass(frozen=True)
class ReportFiles:
    json: Path
    markdown: Path
    html: Path
    ledger: Path
    quadrants: Path
    #: the chart of the mask's toll (None: no result has the section)
    mask_toll: Path | None = None

    def all(self) -> list[Path]:
        charts = [self.mask_toll] if self.mask_toll is not None else []
        return [self.json, self.markdown, self.html, self.ledger, self.quadrants, *charts]


#: a cell starting with one of these is a formula to a spreadsheet (OWASP
#: "CSV Injection"): ``=HYPERLINK(...)`` as an item id or model label
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: str) -> str:
    """``value`` as a spreadsheet reads it as text: control characters and
    bidi overrides shown as their escapes (``plain_text``), and a leading
    formula character escaped with a quote, as OWASP recommends."""
    value = plain_text(value)
    return "'" + value if value.startswith(_FORMULA_START) else value


def ledger_csv(run: ScoredRun) -> str:
    """Long format: one row per (task, model, item, condition, sample:
    0 unless ``[decoding] samples`` > 1); every cell is neutralised against
    formula injection (``csv_cell``)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["task", "model", "item_id", "condition", "state", "truncated", "runaway", "sample"])
    for result in run.results:
        for row in result.ledger:
            for key in row.states:
                for sample, s in enumerate(row.samples(key)):
                    writer.writerow([csv_cell(str(cell)) for cell in (
                        result.task, result.model, row.item_id, key, s.state,
                        "yes" if s.truncated else "no", "yes" if s.runaway else "no", sample)])
    return buf.getvalue()


def toll_chart(run: ScoredRun) -> str | None:
    """mask_toll.svg: a panel per (task, model) result with the mask's toll
    section (None: none has it)."""
    section = TollSection()
    panels = [(f"{r.task} on {r.model}: the mask's toll", section.load(s.data))
              for r in run.results for s in r.sections if s.name == "mask_toll"]
    return toll_svg(panels) if panels else None


def write_reports(run: ScoredRun, out: Path) -> ReportFiles:
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create {out}: {exc.strerror or exc}") from None
    files = ReportFiles(out / "report.json", out / "report.md", out / "report.html",
                        out / "ledger.csv", out / "quadrants.svg")
    svg = quadrants_svg(run)
    chart = toll_chart(run)
    if chart is not None:
        files = replace(files, mask_toll=out / CHART_FILE)
    # every text is made before any file is touched, and the set is renamed
    # in at once: a kill or a full disk never leaves a mix of two scorings
    write_files({
        files.json: run.model_dump_json(indent=2) + "\n",
        files.markdown: render_markdown(run),
        files.ledger: ledger_csv(run),
        files.quadrants: svg,
        files.html: render_html(run, svg),
        **({files.mask_toll: chart} if files.mask_toll is not None and chart is not None else {}),
    })
    if files.mask_toll is None:  # a chart of an earlier scoring in this folder is not this one's
        (out / CHART_FILE).unlink(missing_ok=True)
    return files


def load_report(path: Path) -> ScoredRun:
    text = read_text_file(path, "report")
    try:
        run = ScoredRun.model_validate_json(text)
    except ValidationError as exc:
        raise UsageError(f"{path} is not a conformbench report: "
                         f"{exc.errors()[0]['msg']}") from None
    if run.format.split("/")[0] != REPORT_FORMAT.split("/")[0]:
        raise UsageError(f"{path}: report format {run.format!r} is not {REPORT_FORMAT!r}")
    return run
