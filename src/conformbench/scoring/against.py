"""One decoding against another on the same items: ``conformbench score
REPLAY --against OTHER`` (a run section).

The replays scored (e.g. beam search, ``--beams 3``) and the ``--against``
replays (e.g. the shipped greedy ones) are loaded apart, since the same
generation key is in both; each (task, model) is paired with the other
side's, then each condition with the same condition there, then each item
with the same item (same id, target and input, but that a run asked for
fewer schema formats stores fewer renderings: an item drawn differently is
left out and counted). Per condition the section shows the paired
difference of the task's accuracy (Gen Acc, Val Acc, ...) and, where the
task has one, of schema validity: the interval every comparison uses (the
paired bootstrap over many items and discordant pairs, Newcombe's hybrid
score interval otherwise), the exact McNemar test and the N the difference
needs (``scoring.compare.paired_delta``). No pooled interval over
conditions is given: the conditions of one item share its schema, so their
pairs are not independent.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import Field

from conformbench.records.base import OMITTED_AT_DEFAULT, FrozenRecord, SparseRecord
from conformbench.records.results import Delta, ReplaySource, ScoredRun
from conformbench.scoring.builds import build_differences
from conformbench.scoring.intervals import exact_test_note
from conformbench.scoring.load import LoadedRun, LoadedTable
from conformbench.scoring.metrics import outcomes_of
from conformbench.scoring.paired import paired_delta
from conformbench.scoring.percent import pct, pct_bare, pts
from conformbench.scoring.sections import RunSection, md_text, run_sections
from conformbench.scoring.table import ScoredGeneration

__all__ = ["AgainstData", "AgainstRow", "AgainstSection", "against_data", "decoding_label"]

#: (task, item id) of the items both sides hold as one item
Paired = frozenset[tuple[str, str]]

#: the accuracy's short name in the ConCodeEval tasks (the paper's)
_SHORT = {"generation": "Gen Acc", "validation": "Val Acc"}


class AgainstRow(FrozenRecord):
    """One condition of one (task, model), both decodings over its paired items."""

    task: str
    model: str
    condition: str
    #: items of the condition on each side (before pairing)
    n_from: int
    n_to: int
    #: paired items (same id, same input)
    n: int
    deltas: list[Delta]
    #: answers cut at the budget / ended by the loop stop among the pairs
    cut: tuple[int, int]
    looped: tuple[int, int]
    #: pairs whose two answers are the same text
    same_text: int = 0


class AgainstData(SparseRecord):
    #: the --against side ("from") and the scored side ("to")
    from_label: str
    to_label: str
    against: list[str]
    rows: list[AgainstRow]
    #: what could not be paired, one sentence each
    unpaired: list[str] = Field(default_factory=list)
    #: how the two sides' builds differ (``scoring.builds``), one sentence each;
    #: texts differ across builds, so part of a difference may be the build's
    builds: Annotated[list[str], OMITTED_AT_DEFAULT] = Field(default_factory=list)


def decoding_label(sources: list[ReplaySource]) -> str:
    """How the replays decoded, from their run specs: 'greedy', 'beams 3',
    'sampling (temperature 0.7)'; several decodings joined with ' / '."""
    labels = []
    for src in sources:
        decoding: Mapping[str, Any] = src.spec.get("decoding") or {}
        beams = int(decoding.get("beams") or 1)
        temperature = float(decoding.get("temperature") or 0.0)
        if beams > 1:
            labels.append(f"beams {beams}")
        elif temperature > 0:
            labels.append(f"sampling (temperature {temperature:g})")
        else:
            labels.append("greedy")
    return " / ".join(dict.fromkeys(labels)) or "unknown"


def _partner(table: LoadedTable, others: list[LoadedTable]) -> LoadedTable | None:
    """The other side's table of the same task and model; with one model of
    the task on each side, that one (model labels may differ)."""
    same_task = [o for o in others if o.table.task == table.table.task]
    exact = [o for o in same_task if o.table.model == table.table.model]
    return exact[0] if exact else (same_task[0] if len(same_task) == 1 else None)


def _aligned(a: list[ScoredGeneration], b: list[ScoredGeneration], task: str, paired: Paired
             ) -> tuple[list[ScoredGeneration], list[ScoredGeneration], int]:
    """Rows of the items both sides have with the same input (``paired``,
    as the ledger found them); and how many share an id but not the input."""
    by_id = {r.item_id: r for r in a}
    left: list[ScoredGeneration] = []
    right: list[ScoredGeneration] = []
    differ = 0
    for row in b:
        other = by_id.get(row.item_id)
        if other is None:
            continue
        if (task, row.item_id) not in paired:
            differ += 1
            continue
        left.append(other)
        right.append(row)
    return left, right, differ


def _row(before: LoadedTable, after: LoadedTable, key: str, detect: float, paired: Paired,
         unpaired: list[str]) -> AgainstRow | None:
    a_cond = next(c for c in before.table.conditions if c.key == key)
    b_cond = next(c for c in after.table.conditions if c.key == key)
    a_all, b_all = before.table.column(a_cond), after.table.column(b_cond)
    a_rows, b_rows, differ = _aligned(a_all, b_all, after.table.task, paired)
    where = f"{after.table.task} on {after.table.model}, {key}"
    if differ:
        unpaired.append(f"{where}: {differ} item(s) share an id but not the input (left out)")
    if not a_rows:
        unpaired.append(f"{where}: no item on both sides")
        return None
    a, b = outcomes_of(a_rows), outcomes_of(b_rows)
    name = _SHORT.get(after.table.task, after.correctness_label)
    deltas = [paired_delta(name, a.correct, b.correct, detect)] if a.correct is not None and b.correct is not None else []
    if a.valid is not None and b.valid is not None and after.table.task not in _SHORT:
        deltas.append(paired_delta("schema validity", a.valid, b.valid, detect))
    return AgainstRow(task=after.table.task, model=after.table.model, condition=key,
                      n_from=len(a_all), n_to=len(b_all), n=len(a_rows), deltas=deltas,
                      cut=(int(a.truncated.sum()), int(b.truncated.sum())),
                      looped=(int(a.looped.sum()), int(b.looped.sum())),
                      same_text=sum(x.text == y.text for x, y in zip(a_rows, b_rows, strict=True)))


def against_data(scored: LoadedRun, against: LoadedRun, detect: float, paired: Paired) -> AgainstData:
    """The paired comparison of every condition the two sides share, over
    the items ``paired`` names: (task, id) of the items both sides hold as
    one item, as the ledger decides (``runner.ledger.paired_items``)."""
    rows: list[AgainstRow] = []
    unpaired: list[str] = []
    for table in scored.tables:
        other = _partner(table, against.tables)
        name = f"{table.table.task} on {table.table.model}"
        if other is None:
            unpaired.append(f"{name}: no generations of the task in the --against replays")
            continue
        theirs = {c.key for c in other.table.conditions}
        for cond in table.table.conditions:
            if cond.key not in theirs:
                unpaired.append(f"{name}, {cond.key}: not in the --against replays")
                continue
            row = _row(other, table, cond.key, detect, paired, unpaired)
            if row is not None:
                rows.append(row)
    sides = [(s.path, s.build) for s in [*scored.sources, *against.sources]]
    return AgainstData(from_label=decoding_label(against.sources), to_label=decoding_label(scored.sources),
                       against=[s.path for s in against.sources], rows=rows, unpaired=unpaired,
                       builds=build_differences(sides))


def _cells(row: AgainstRow, d: Delta) -> list[str]:
    lo, hi = d.ci95
    method = "Newcombe" if d.method == "newcombe" else "bootstrap"
    detected = "yes" if d.detected else "no"
    return [md_text(row.task), md_text(row.model), md_text(row.condition), d.metric, str(row.n),
            pct_bare(d.from_rate), pct_bare(d.to_rate), f"{pts(d.delta)} [{pts(lo)}, {pts(hi)}] ({method})",
            f"{d.discordant[0]} / {d.discordant[1]}", f"{d.mcnemar_p:.3g}", detected,
            f"{row.cut[0]} / {row.cut[1]}", f"{row.looped[0]} / {row.looped[1]}", str(row.same_text)]


def _intro(data: AgainstData) -> str:
    f, t = md_text(data.from_label), md_text(data.to_label)
    return (f"**{t}** (these replays) against **{f}** (--against: "
            + ", ".join(md_text(p) for p in data.against) + "). Each difference is "
            f"{t} minus {f} over the items both have (N), with a paired 95% "
            "interval (bootstrap with at least 100 items and 30 discordant pairs, else Newcombe's "
            "hybrid score interval) and an exact McNemar test; detected = the interval excludes 0 "
            "and p < 0.05. No pooled interval: the conditions of one item share its schema.")


def _html_cells(row: AgainstRow, d: Delta) -> list[str]:
    """One row of the HTML table (escaped; a condition wraps only between its parts)."""
    lo, hi = d.ci95
    method = "Newcombe" if d.method == "newcombe" else "bootstrap"
    key = html.escape(row.condition).replace("/", "/<wbr>").replace("@", "<wbr>@")
    return [f"{html.escape(row.task)}<br>{html.escape(row.model)}", f'<code class="key">{key}</code>',
            html.escape(d.metric), str(row.n), f"{pct_bare(d.from_rate)} → {pct_bare(d.to_rate)}",
            f'{pts(d.delta)}<br><span class="ci">[{pts(lo)}, {pts(hi)}] {method}</span>',
            f"{d.discordant[0]} / {d.discordant[1]}", f"{d.mcnemar_p:.3g}", "yes" if d.detected else "no",
            f"{row.cut[0]} / {row.cut[1]}", f"{row.looped[0]} / {row.looped[1]}", str(row.same_text)]


@run_sections.register("decoding_against")
class AgainstSection(RunSection[AgainstData]):
    """Made by ``score_replays(..., against=...)`` (``--against``): a run
    alone has nothing to pair with, so ``compute`` gives None."""

    title = "Decoding against decoding (paired by item and condition)"
    data_model = AgainstData

    def compute(self, run: ScoredRun) -> AgainstData | None:
        return None

    def markdown(self, data: AgainstData) -> str:
        f, t = data.from_label, data.to_label
        lines = [_intro(data), ""]
        if data.rows:
            lines += [f"| task | model | condition | metric | N | {md_text(f)} % | {md_text(t)} % | "
                      f"difference, pts [95%] | discordant ({md_text(f)} right only / {md_text(t)} right only) "
                      f"| McNemar p | detected | cut ({md_text(f)} / {md_text(t)}) "
                      f"| loop stop ({md_text(f)} / {md_text(t)}) | same answer text |",
                      "|---" * 14 + "|"]
            lines += ["| " + " | ".join(_cells(r, d)) + " |" for r in data.rows for d in r.deltas]
        else:
            lines.append("No condition is in both.")
        if data.unpaired:
            lines += ["", "Not paired: " + "; ".join(md_text(u) for u in data.unpaired) + "."]
        if data.builds:
            lines += ["", "Builds: " + "; ".join(md_text(b) for b in data.builds) + ". Greedy texts are "
                      "bit-identical only on one build, CPU and thread count: part of a difference may be the build's."]
        return "\n".join(lines) + "\n"

    def html(self, data: AgainstData) -> str:
        """report.md's table in fewer, narrower columns (the two rates in one
        cell, short headings explained above the table), so the widest run,
        ConCodeEval beams against greedy, fits a 1280 px window."""
        from conformbench.scoring.concodeeval.figures import markdown_html

        intro = markdown_html(_intro(data))
        if not data.rows:
            return markdown_html(self.markdown(data))
        f, t = html.escape(data.from_label), html.escape(data.to_label)
        legend = (f"<p class=\"role\">rates: {f} → {t}; discordant: items right under {f} only / under {t} "
                  f"only; cut and loop stop: {f} / {t}; same: pairs whose two answers are the same text.</p>")
        head = ["task, model", "condition", "metric", "N", "% rates", "difference, pts [95%]", "discordant",
                "McNemar p", "detected", "cut", "loop stop", "same"]
        body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in _html_cells(r, d)) + "</tr>"
                       for r in data.rows for d in r.deltas)
        return (intro + legend + '<div class="wide"><table class="arms"><thead><tr>'
                + "".join(f"<th>{h}</th>" for h in head) + f"</tr></thead><tbody>{body}</tbody></table></div>"
                + (markdown_html("Not paired: " + "; ".join(md_text(u) for u in data.unpaired) + ".")
                   if data.unpaired else ""))

    def terminal(self, data: AgainstData) -> list[str]:
        out = [f"  builds differ: {b}" for b in data.builds]
        for r in data.rows:
            for d in r.deltas:
                lo, hi = d.ci95
                call = "not established" if d.excludes_0 else "no detectable effect"  # as reports.text.delta_text
                verdict = "" if d.detected else f"{call} at N={r.n}: "
                note = "" if d.detected else exact_test_note(d.excludes_0, d.discordant)
                out.append(f"  {data.to_label} vs {data.from_label}, {r.task} {r.condition}: {d.metric} "
                           f"{pct(d.from_rate)} -> {pct(d.to_rate)}, {verdict}{pts(d.delta)} pts "
                           f"[{pts(lo)}, {pts(hi)}] (N={r.n}, McNemar p={d.mcnemar_p:.3g}"
                           + (f"; {note})" if note else ")"))
        return out
