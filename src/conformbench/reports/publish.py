"""Score replays, write every report file and check the CI gates: the shared
back half of ``conformbench run`` and ``conformbench score``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformbench.errors import GateNotEvaluableError
from conformbench.records.results import ScoredRun
from conformbench.records.spec import RunSpec
from conformbench.reports.rescore import score_replays
from conformbench.reports.terminal import rate_table_lines, unmeasured_metrics, warning_lines
from conformbench.reports.text import format_mode_text
from conformbench.reports.verdict import smoke_lines, terminal_comparisons
from conformbench.reports.write import ReportFiles, write_reports
from conformbench.runner.run import RunSummary
from conformbench.scoring.gate import Gate, GateCheck, evaluate_gates
from conformbench.scoring.paired import DEFAULT_DETECT
from conformbench.scoring.sections import run_sections, sections

__all__ = ["Published", "headline_lines", "publish"]


@dataclass(frozen=True)
class Published:
    """What ``conformbench.run`` and ``conformbench.score`` return: the
    scored run (report.json's records), the files written and the gates'
    verdicts; after a live run also what it generated and under which spec."""

    run: ScoredRun
    files: ReportFiles
    checks: list[GateCheck]
    generation: RunSummary | None = None
    spec: RunSpec | None = None

    def headline(self, verbose: bool = False) -> list[str]:
        """The terminal summary's lines (what ``conformbench run`` prints)."""
        return headline_lines(self.run, verbose)

    @property
    def tripped(self) -> list[GateCheck]:
        return [c for c in self.checks if c.tripped]

    @property
    def exit_code(self) -> int:
        return 1 if self.tripped else 0

    def summary(self) -> dict[str, Any]:
        """The machine-readable summary printed by --json."""
        return {
            "report": str(self.files.json),
            "format_mode": self.run.format_mode,
            "files": [str(p) for p in self.files.all()],
            "results": [
                {"task": r.task, "model": r.model, "n": r.n,
                 "excluded": sorted({e.item_id for e in r.exclusions}),
                 "arms": {a.key: {"validity": a.validity and a.validity.rate,
                                  "accuracy": a.accuracy and a.accuracy.rate,
                                  "wrong_but_valid": a.wrong_but_valid
                                  and a.wrong_but_valid.rate,
                                  "truncated": a.truncated} for a in r.arms},
                 # what the sections measure beyond sample 0's rates (pass@k with samples, gen_acc...)
                 "section_metrics": {s.name: s.metrics for s in r.sections if s.metrics}}
                for r in self.run.results],
            "gates": [{"gate": c.gate.text, "task": c.task, "model": c.model,
                       "condition": c.label, "value": c.value, "tripped": c.tripped}
                      for c in self.checks],
            "exit_code": self.exit_code,
        }


def publish(replays: list[Path], out: Path, gates: list[Gate],
            format_assertion: bool | None = None, detect: float = DEFAULT_DETECT,
            against: list[Path] | None = None, task_params: dict[str, Any] | None = None) -> Published:
    """``format_assertion``, ``detect``, ``against``, ``task_params``: see
    ``score_replays`` (None: as the replays say)."""
    run = score_replays(replays, format_assertion, detect, against, task_params)
    try:
        checks = evaluate_gates(gates, run)  # unknown metrics fail before files are written
    except GateNotEvaluableError as exc:  # the reports show the n/a values: written, then exit 2
        files = write_reports(run, out)
        raise GateNotEvaluableError(f"{exc} (reports written in {files.json.parent})") from None
    files = write_reports(run, out)
    return Published(run, files, checks)


def headline_lines(run: ScoredRun, verbose: bool = False) -> list[str]:
    """The terminal summary: per task and model, each condition's rates with
    intervals and N, one line per kind of warning, then each grammar
    comparison once, on one line (no metric unmeasured or 0 by definition, at most
    a few comparisons, unless ``verbose``); then the verdict on a run too
    small for its question, and how ``format`` was read. A replay whose
    last line was torn says so first, as report.md does."""
    lines = [f"{src.path}: an unterminated last line ({src.truncated_tail} bytes) was ignored (a write cut "
             "short: rerun the run to redo its generation)" for src in run.replays if src.truncated_tail]
    for result in run.results:
        left = len({e.item_id for e in result.exclusions})
        note = result.task_info.get("items_note")  # e.g. validation's: 2 items per schema
        lines.append(f"{result.task} on {result.model}: N={result.n} items{f' ({note})' if note else ''}, "
                     f"{left} left out of a condition")
        lines += rate_table_lines(result, set() if verbose else unmeasured_metrics(result))
        lines += warning_lines(result, verbose)
        lines += terminal_comparisons(result, verbose)
    return [*lines, *_section_lines(run), *smoke_lines(run), format_mode_text(run.format_mode)]


def _section_lines(run: ScoredRun) -> list[str]:
    """What the sections say in the terminal (``Section.terminal``; most say
    nothing there)."""
    lines: list[str] = []
    stored = [(sections, s) for r in run.results for s in r.sections] + [(run_sections, s) for s in run.sections]
    for registry, section in stored:
        if section.name in registry:
            impl = registry.get(section.name)()
            lines += impl.terminal(impl.load(section.data))
    return lines
