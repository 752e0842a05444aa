"""The verdict: the first lines of report.md and report.html, and the
terminal summary's comparisons and closing line. Per task and model, each
comparison the verdict covers (``VERDICT_ROLES``: the grammar switched on,
and each multi-round arm against the one-answer arms it is compared with) in
one sentence, the same words everywhere (``verdict_sentence``); report.html
folds the statistics behind each sentence below them; a run where no
comparison has the items its question needs says it is a smoke run."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from conformbench.records.results import Comparison, Delta, ScoredRun, TaskModelResult
from conformbench.reports.terminal import unmeasured_metrics
from conformbench.reports.text import delta_text, effect_detected, metric_label, power_text, underpowered
from conformbench.reports.verdict_sentence import VERDICT_METRICS, comparison_sentence, verdict_deltas
from conformbench.scoring.sections import md_text

__all__ = [
    "TERMINAL_COMPARISONS",
    "VERDICT_METRICS",
    "VERDICT_ROLES",
    "VerdictBlock",
    "smoke_lines",
    "smoke_run",
    "terminal_comparisons",
    "verdict_blocks",
    "verdict_html",
    "verdict_markdown",
]

#: the comparisons the verdict covers: only the grammar differs, and a
#: multi-round arm (repair, resample, fallback) against the arms it is compared with
VERDICT_ROLES = ("headline", "policy")

#: comparisons per task the terminal shows (report.md and report.html have all)
TERMINAL_COMPARISONS = 3

_NONE = "no comparison for a verdict (no prompt_only/constrained pair of the same contract, no multi-round arm)"


@dataclass(frozen=True)
class VerdictBlock:
    """One task on one model: a heading, one sentence per comparison, and
    the statistics behind them (one line per comparison and metric)."""

    heading: str
    sentences: list[str]
    details: list[str]


def _verdict_comparisons(result: TaskModelResult) -> list[Comparison]:
    return [c for c in result.comparisons if c.role in VERDICT_ROLES]


def _sentences(result: TaskModelResult) -> list[str]:
    hidden = unmeasured_metrics(result)  # as the terminal's rate table hides them
    return [comparison_sentence(c, result.correctness_label, hidden) for c in _verdict_comparisons(result)]


def _detail_lines(comp: Comparison, label: str) -> list[str]:
    out = []
    for d in verdict_deltas(comp):
        power = power_text(d, comp.n)
        out.append(f"{comp.from_key} → {comp.to_key}: {metric_label(d.metric, label)} "
                   f"{delta_text(d, comp.n)}" + (f"; {power}" if power else ""))
    return out


def _block(result: TaskModelResult) -> VerdictBlock:
    comps = _verdict_comparisons(result)
    details = [line for c in comps for line in _detail_lines(c, result.correctness_label)]
    return VerdictBlock(f"{result.task} on {result.model} (N={result.n})", _sentences(result) or [_NONE], details)


def verdict_blocks(run: ScoredRun) -> list[VerdictBlock]:
    return [_block(r) for r in run.results]


def _deltas(run: ScoredRun) -> list[tuple[Delta, int]]:
    """The deltas the sentences speak of (no metric a task leaves unmeasured)."""
    return [(d, c.n) for r in run.results for c in _verdict_comparisons(r)
            for d in verdict_deltas(c, unmeasured_metrics(r))]


def smoke_run(run: ScoredRun) -> bool:
    """Every verdict delta is underpowered: nothing detected, and fewer
    items than the asked difference needs (False without comparisons)."""
    deltas = _deltas(run)
    return bool(deltas) and all(underpowered(d, n) for d, n in deltas)


def _smoke_line(run: ScoredRun, capital: bool = False) -> str:
    asked = f"{100 * run.detect:g} points" if run.detect is not None else "the asked difference"
    return (f"{'S' if capital else 's'}moke run: no comparison has the items detecting {asked} needs (--detect); "
            "it shows the pipeline works, not what the grammar does.")


def terminal_comparisons(result: TaskModelResult, verbose: bool = False) -> list[str]:
    """A task's verdict sentences for the terminal, after its rates: the
    words of report.md and report.html (at most TERMINAL_COMPARISONS unless
    ``verbose``)."""
    sentences = _sentences(result)
    if not sentences:
        return [f"  {_NONE}"]
    shown = sentences if verbose else sentences[:TERMINAL_COMPARISONS]
    out = ["  verdict (paired 95% intervals; the statistics are in report.md):", *(f"  - {s}" for s in shown)]
    if len(sentences) > len(shown):
        out.append(f"  ... and {len(sentences) - len(shown)} more comparisons in report.md (--verbose: all)")
    return out


def smoke_lines(run: ScoredRun) -> list[str]:
    """The terminal's closing verdict line, always there (issue #48): the
    smoke-run line on a run too small for its question, otherwise how many
    of the verdict's differences were detected, or that there is no comparison."""
    if smoke_run(run):
        return [f"verdict: {_smoke_line(run)}"]
    deltas = _deltas(run)
    if not deltas:
        return [f"verdict: {_NONE}"]
    found = sum(effect_detected(d) for d, _n in deltas)
    comps = sum(len(_verdict_comparisons(r)) for r in run.results)
    return [f"verdict: {found} of {len(deltas)} differences detected over {comps} comparison(s) (paired 95% "
            "intervals, exact McNemar); the sentences above say which, report.md has the statistics"]


def verdict_markdown(run: ScoredRun) -> list[str]:
    """report.md's first section: the sentences (the statistics are under
    each task's Comparisons)."""
    out = ["## Verdict", "", "One sentence per comparison (the grammar switched on; each multi-round arm against "
           "the one-answer arms); the statistics are under each task's Comparisons.", ""]
    if smoke_run(run):
        out += [f"**{_smoke_line(run, capital=True)}**", ""]
    for block in verdict_blocks(run):
        out += [f"**{md_text(block.heading)}**", "", *[f"- {md_text(s)}" for s in block.sentences], ""]
    return out


def verdict_html(run: ScoredRun) -> str:
    """report.html's first section: the sentences, the statistics folded below."""
    parts = ['<section class="verdict"><h2>Verdict</h2>'
             '<p class="role">One sentence per comparison (the grammar switched on; each multi-round arm '
             'against the one-answer arms); the statistics are folded below.</p>']
    if smoke_run(run):
        parts.append(f"<p><strong>{escape(_smoke_line(run, capital=True))}</strong></p>")
    for block in verdict_blocks(run):
        items = "".join(f"<li>{escape(s)}</li>" for s in block.sentences)
        parts.append(f"<h3>{escape(block.heading)}</h3><ul>{items}</ul>")
        if block.details:
            rows = "".join(f"<li>{escape(line)}</li>" for line in block.details)
            parts.append(f"<details><summary>Statistics behind these sentences</summary><ul>{rows}</ul></details>")
    return "".join(parts) + "</section>"
