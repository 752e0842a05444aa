"""The verdict: the first lines of the terminal summary, report.md and
report.html. Per task and model, what switching the grammar on (the headline
comparisons: only the grammar differs) did to validity, accuracy and
wrong-but-valid, with intervals, N and whether N suffices; a run where no
comparison has the items its question needs says it is a smoke run."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from conformbench.records.results import Comparison, Delta, ScoredRun, TaskModelResult
from conformbench.reports.terminal import unmeasured_metrics
from conformbench.reports.text import delta_text, effect_detected, metric_label, power_text, underpowered
from conformbench.scoring.sections import md_text

__all__ = [
    "TERMINAL_COMPARISONS",
    "VERDICT_METRICS",
    "VerdictBlock",
    "smoke_lines",
    "smoke_run",
    "terminal_comparisons",
    "verdict_blocks",
    "verdict_html",
    "verdict_markdown",
]

#: what the verdict reports of each grammar comparison, in order
VERDICT_METRICS = ("validity", "accuracy", "wrong_but_valid")


@dataclass(frozen=True)
class VerdictBlock:
    """One task on one model: a heading and one line per (comparison, metric)."""

    heading: str
    lines: list[str]


def _comparison_lines(comp: Comparison, label: str) -> list[str]:
    out = []
    for d in _ordered(comp):
        power = power_text(d, comp.n)
        out.append(f"{comp.from_key} -> {comp.to_key}: {metric_label(d.metric, label)} "
                   f"{delta_text(d, comp.n)}" + (f"; {power}" if power else ""))
    return out


def _block(result: TaskModelResult) -> VerdictBlock:
    heads = [c for c in result.comparisons if c.role == "headline"]
    lines = [line for c in heads for line in _comparison_lines(c, result.correctness_label)]
    if not lines:
        lines = ["no grammar comparison (no prompt_only/constrained pair of the same contract)"]
    return VerdictBlock(f"{result.task} on {result.model} (N={result.n}): switching the grammar on", lines)


def verdict_blocks(run: ScoredRun) -> list[VerdictBlock]:
    return [_block(r) for r in run.results]


def smoke_run(run: ScoredRun) -> bool:
    """Every headline delta is underpowered: nothing detected, and fewer
    items than the asked difference needs (False without comparisons)."""
    deltas = [(d, c.n) for r in run.results for c in r.comparisons if c.role == "headline"
              for d in c.deltas if d.metric in VERDICT_METRICS]
    return bool(deltas) and all(underpowered(d, n) for d, n in deltas)


def _smoke_line(run: ScoredRun, capital: bool = False) -> str:
    asked = f"{100 * run.detect:g} pts" if run.detect is not None else "the asked difference"
    return (f"{'S' if capital else 's'}moke run: no comparison has the items detecting {asked} needs (--detect); it shows "
            "the pipeline works, not what the grammar does.")


#: headline comparisons per task the terminal verdict shows (report.md has all)
TERMINAL_COMPARISONS = 3


def _ordered(comp: Comparison, hidden: set[str] | None = None) -> list[Delta]:
    """The verdict metrics' deltas in VERDICT_METRICS order, less ``hidden``."""
    by_metric = {d.metric: d for d in comp.deltas}
    return [by_metric[m] for m in VERDICT_METRICS if m in by_metric and m not in (hidden or set())]


def _short(comp: Comparison, label: str, hidden: set[str]) -> str:
    """One comparison on one line: each verdict metric's delta and interval,
    whether it is an effect, and whether N suffices."""
    parts, short_of = [], []
    for d in _ordered(comp, hidden):
        lo, hi = d.ci95
        word = "detected" if effect_detected(d) else "not detected"
        parts.append(f"{metric_label(d.metric, label)} {100 * d.delta:+.1f} pts "
                     f"[{100 * lo:+.1f}, {100 * hi:+.1f}] {word}")
        if underpowered(d, comp.n):
            short_of.append(d)
    tail = "N suffices" if not short_of else _needs(short_of)
    return f"{comp.from_key} -> {comp.to_key}, N={comp.n}: " + ", ".join(parts) + f"; {tail}"


def _needs(deltas: list[Delta]) -> str:
    asked = f"{100 * (deltas[0].detect or 0):g} pts"
    known = sorted(d.n_needed for d in deltas if d.n_needed is not None)
    if not known:
        return f"underpowered: {asked} needs more than a million items"
    span = str(known[0]) if known[0] == known[-1] else f"{known[0]}-{known[-1]}"
    return f"underpowered: {asked} needs N={span}"


def terminal_comparisons(result: TaskModelResult, verbose: bool = False) -> list[str]:
    """A task's grammar comparisons for the terminal, after its rates: each
    once, on one line (at most TERMINAL_COMPARISONS, without a metric no
    condition measures, unless ``verbose``; report.md has every one in detail)."""
    heads = [c for c in result.comparisons if c.role == "headline"]
    if not heads:
        return ["  no grammar comparison (no prompt_only/constrained pair of the same contract)"]
    shown = heads if verbose else heads[:TERMINAL_COMPARISONS]
    hidden = set() if verbose else unmeasured_metrics(result)  # as the rate table hides them
    out = ["  switching the grammar on (paired 95% intervals; the detail is in report.md):"]
    out += [f"  {_short(c, result.correctness_label, hidden)}" for c in shown]
    if len(heads) > len(shown):
        out.append(f"  ... and {len(heads) - len(shown)} more grammar comparisons in report.md (--verbose: all)")
    return out


def smoke_lines(run: ScoredRun) -> list[str]:
    """The terminal's closing verdict line, always there (issue #48): the
    smoke-run line on a run too small for its question, otherwise how many
    headline differences were detected, or that there is no comparison."""
    if smoke_run(run):
        return [f"verdict: {_smoke_line(run)}"]
    deltas = [d for r in run.results for c in r.comparisons if c.role == "headline"
              for d in c.deltas if d.metric in VERDICT_METRICS]
    if not deltas:
        return ["verdict: no grammar comparison in this run (no prompt_only/constrained pair of the same contract)"]
    found = sum(effect_detected(d) for d in deltas)
    return [f"verdict: {found} of {len(deltas)} headline differences detected (paired 95% intervals, exact "
            "McNemar); the lines above name them, report.md has each in detail"]


def verdict_markdown(run: ScoredRun) -> list[str]:
    """report.md's first section."""
    out = ["## Verdict", "", "Headline comparisons (only the grammar differs); the details follow.", ""]
    if smoke_run(run):
        out += [f"**{_smoke_line(run, capital=True)}**", ""]
    for block in verdict_blocks(run):
        out += [f"**{md_text(block.heading)}**", "", *[f"- {line}" for line in block.lines], ""]
    return out


def verdict_html(run: ScoredRun) -> str:
    """report.html's first section."""
    parts = ['<section class="verdict"><h2>Verdict</h2>'
             '<p class="role">Headline comparisons (only the grammar differs); the details follow.</p>']
    if smoke_run(run):
        parts.append(f"<p><strong>{escape(_smoke_line(run, capital=True))}</strong></p>")
    for block in verdict_blocks(run):
        items = "".join(f"<li>{escape(line)}</li>" for line in block.lines)
        parts.append(f"<h3>{escape(block.heading)}</h3><ul>{items}</ul>")
    return "".join(parts) + "</section>"
