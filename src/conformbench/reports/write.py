"""Writing every report file of a ScoredRun, and reading report.json back."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from conformbench.errors import UsageError
from conformbench.records.results import REPORT_FORMAT, ScoredRun
from conformbench.reports.html import render_html
from conformbench.reports.markdown import render_markdown
from conformbench.reports.plots import quadrants_svg

__all__ = ["ReportFiles", "ledger_csv", "load_report", "write_reports"]


@dataclass(frozen=True)
class ReportFiles:
    json: Path
    markdown: Path
    html: Path
    ledger: Path
    quadrants: Path

    def all(self) -> list[Path]:
        return [self.json, self.markdown, self.html, self.ledger, self.quadrants]


def ledger_csv(run: ScoredRun) -> str:
    """Long format: one row per (task, model, item, condition)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["task", "model", "item_id", "condition", "state", "truncated", "runaway"])
    for result in run.results:
        for row in result.ledger:
            for key, state in row.states.items():
                writer.writerow([result.task, result.model, row.item_id, key, state,
                                 "yes" if key in row.truncated else "no",
                                 "yes" if key in row.runaway else "no"])
    return buf.getvalue()


def write_reports(run: ScoredRun, out: Path) -> ReportFiles:
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create {out}: {exc.strerror or exc}") from None
    files = ReportFiles(out / "report.json", out / "report.md", out / "report.html",
                        out / "ledger.csv", out / "quadrants.svg")
    svg = quadrants_svg(run)
    files.json.write_text(run.model_dump_json(indent=2) + "\n", encoding="utf-8")
    files.markdown.write_text(render_markdown(run), encoding="utf-8")
    files.ledger.write_text(ledger_csv(run), encoding="utf-8")
    files.quadrants.write_text(svg, encoding="utf-8")
    files.html.write_text(render_html(run, svg), encoding="utf-8")
    return files


def load_report(path: Path) -> ScoredRun:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None
    try:
        run = ScoredRun.model_validate_json(text)
    except ValidationError as exc:
        raise UsageError(f"{path} is not a conformbench report: "
                         f"{exc.errors()[0]['msg']}") from None
    if run.format.split("/")[0] != REPORT_FORMAT.split("/")[0]:
        raise UsageError(f"{path}: report format {run.format!r} is not {REPORT_FORMAT!r}")
    return run
