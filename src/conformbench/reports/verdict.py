"""The verdict: the first lines of report.md and report.html, and the
terminal summary's comparisons and closing line. Per task and model, each
comparison the verdict covers (``VERDICT_ROLES``: the grammar switched on,
and each multi-round arm against the one-answer arms it is compared with) as
one bold headline line (a number with its interval and a word:
``verdict_sentence.headline``) with one sentence below it, the same words
everywhere (``verdict_sentence``); report.html folds the sentence and the
statistics behind it below each headline; a run where no comparison has the
items its question needs says it is a smoke run."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from conformbench.records.results import Comparison, Delta, ScoredRun, TaskModelResult
from conformbench.reports.terminal import unmeasured_metrics
from conformbench.reports.text import delta_text, effect_detected, metric_label, power_text, underpowered
from conformbench.reports.verdict_sentence import VERDICT_METRICS, comparison_sentence, headline, verdict_deltas
from conformbench.scoring.sections import md_text

__all__ = [
    "TERMINAL_COMPARISONS",
    "TERMINAL_HEADLINE",
    "VERDICT_METRICS",
    "VERDICT_ROLES",
    "VerdictBlock",
    "VerdictEntry",
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

#: what starts a comparison's headline on the terminal (its sentence follows, indented further);
#: no other terminal line starts so, and the command prints these in bold on a terminal
TERMINAL_HEADLINE = "  - "

_NONE = "no comparison for a verdict (no prompt_only/constrained pair of the same contract, no multi-round arm)"


@dataclass(frozen=True)
class VerdictEntry:
    """One comparison: its headline (a number, its interval and a word),
    its sentence, and the statistics behind it (one line per metric)."""

    headline: str
    sentence: str
    details: list[str]


@dataclass(frozen=True)
class VerdictBlock:
    """One task on one model: a heading and an entry per comparison (none:
    ``empty`` says why)."""

    heading: str
    entries: list[VerdictEntry]
    empty: str = ""


def _verdict_comparisons(result: TaskModelResult) -> list[Comparison]:
    return [c for c in result.comparisons if c.role in VERDICT_ROLES]


def _entries(result: TaskModelResult) -> list[VerdictEntry]:
    hidden = unmeasured_metrics(result)  # as the terminal's rate table hides them
    label = result.correctness_label
    return [VerdictEntry(headline(c, label, hidden), comparison_sentence(c, label, hidden), _detail_lines(c, label))
            for c in _verdict_comparisons(result)]


def _detail_lines(comp: Comparison, label: str) -> list[str]:
    out = []
    for d in verdict_deltas(comp):
        power = power_text(d, comp.n)
        out.append(f"{comp.from_key} → {comp.to_key}: {metric_label(d.metric, label)} "
                   f"{delta_text(d, comp.n)}" + (f"; {power}" if power else ""))
    return out


def _block(result: TaskModelResult) -> VerdictBlock:
    entries = _entries(result)
    return VerdictBlock(f"{result.task} on {result.model} (N={result.n})", entries, "" if entries else _NONE)


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
    asked = f"{100 * run.detect:g}-point difference" if run.detect is not None else "the asked difference"
    return (f"{'S' if capital else 's'}moke run: no comparison has the items it would need to tell a {asked} "
            "from chance (--detect); it shows the pipeline works, not what the grammar does.")


def terminal_comparisons(result: TaskModelResult, verbose: bool = False) -> list[str]:
    """A task's verdict for the terminal, after its rates: per comparison
    its headline (``  - ``) and its sentence below it (indented), the words
    of report.md and report.html (at most TERMINAL_COMPARISONS unless
    ``verbose``)."""
    entries = _entries(result)
    if not entries:
        return [f"  {_NONE}"]
    shown = entries if verbose else entries[:TERMINAL_COMPARISONS]
    out = ["  verdict (paired 95% intervals; the statistics are in report.md):"]
    for entry in shown:
        out += [f"{TERMINAL_HEADLINE}{entry.headline}", f"    {entry.sentence}"]
    if len(entries) > len(shown):
        out.append(f"  ... and {len(entries) - len(shown)} more comparisons in report.md (--verbose: all)")
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
            "intervals, exact McNemar); the lines above say which, report.md has the statistics"]


_ROLE = ("One bold line per comparison (the grammar switched on; each multi-round arm against the one-answer arms): "
         "the difference in its first metric, in points with its paired 95% interval, and whether it is likely real, "
         "not established, or rests on too few items to say")


def verdict_markdown(run: ScoredRun) -> list[str]:
    """report.md's first section: per comparison its headline in bold and
    its sentence below (the statistics are under each task's Comparisons)."""
    out = ["## Verdict", "", f"{_ROLE}; the sentence below it says it in words, and the statistics are under each "
           "task's Comparisons.", ""]
    if smoke_run(run):
        out += [f"**{_smoke_line(run, capital=True)}**", ""]
    for block in verdict_blocks(run):
        out += [f"**{md_text(block.heading)}**", ""]
        for entry in block.entries:
            out += [f"- **{md_text(entry.headline)}**", f"  - {md_text(entry.sentence)}"]
        out += [f"- {md_text(block.empty)}"] if block.empty else []
        out.append("")
    return out


def _entry_html(entry: VerdictEntry) -> str:
    rows = "".join(f"<li>{escape(line)}</li>" for line in entry.details)
    stats = f'<ul class="stats">{rows}</ul>' if rows else ""
    return (f'<li><p class="headline"><strong>{escape(entry.headline)}</strong></p>'
            f"<details><summary>In words, and the statistics</summary><p>{escape(entry.sentence)}</p>{stats}"
            "</details></li>")


def verdict_html(run: ScoredRun) -> str:
    """report.html's first section: per comparison its headline in bold, its
    sentence and statistics folded below (``<details>``)."""
    parts = [f'<section class="verdict"><h2>Verdict</h2><p class="role">{escape(_ROLE)}; the sentence and the '
             "statistics behind each are folded below it.</p>"]
    if smoke_run(run):
        parts.append(f"<p><strong>{escape(_smoke_line(run, capital=True))}</strong></p>")
    for block in verdict_blocks(run):
        items = "".join(_entry_html(e) for e in block.entries)
        empty = f"<li>{escape(block.empty)}</li>" if block.empty else ""
        parts.append(f'<h3>{escape(block.heading)}</h3><ul class="verdicts">{items}{empty}</ul>')
    return "".join(parts) + "</section>"
