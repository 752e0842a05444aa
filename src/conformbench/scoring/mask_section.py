"""The report section of the mask's toll (issue #53): per constrained arm,
what the token mask took from the model (``records.mask_toll``, recorded
per generation by the local backends), split by how the answer scored:
right, wrong but valid, invalid. Per group: the mean allowed share of the
model's probability, the mean of each item's smallest share, the items
where the grammar refused the model's own top token at least once, and
where that first happened. Read from the replay alone: ``score`` needs no
model. An arm whose constraint the server applied (the openai backend)
has no mask to read: n/a.

A thinking arm (think_then_constrain) is read from its answer part
(``MaskToll.answer``: the steps after the stop string), since its free
text, with a share near 1, would dilute the mean; a call that never reached
the stop string has no answer part and is not counted. A replay made before
the answer part was recorded shows the whole call, and says so (``part``)."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable

import numpy as np

from conformbench.records.items import Condition
from conformbench.records.markdown_escape import md_code
from conformbench.records.mask_toll import MaskToll, compact
from conformbench.records.spec import SERVER_ENGINE
from conformbench.scoring.concodeeval.figures import markdown_html
from conformbench.scoring.intervals import item_share_interval, wilson
from conformbench.scoring.mask_chart import TollArm, TollData, TollGroup, toll_svg
from conformbench.scoring.percent import rate_ci
from conformbench.scoring.sections import Section, md_text, sections
from conformbench.scoring.table import ScoredGeneration, ScoredTable

__all__ = ["TollArm", "TollData", "TollGroup", "TollSection", "toll_data"]

#: the groups, in the order shown; "valid" holds the valid answers of a task without a gold answer
GROUPS: tuple[tuple[str, Callable[[ScoredGeneration], bool]], ...] = (
    ("right", lambda r: r.score.correct is True),
    ("wrong but valid", lambda r: r.score.valid is True and r.score.correct is False),
    ("valid", lambda r: r.score.valid is True and r.score.correct is None),
    ("invalid", lambda r: r.score.valid is not True),
    ("all", lambda r: True),
)
#: the percentiles of the items' mean shares the chart draws
QUANTILES = (10, 25, 50, 75, 90)
#: the chart's file beside report.html (reports/write.py)
CHART_FILE = "mask_toll.svg"
#: how many of the places where the top token was first refused are named
TOP_PLACES = 3
NOT_MEASURED = ("not measured: the engine applies its grammar inside llama.cpp's sampler (gbnf), beam "
                "search, or a replay made before the toll was recorded")
SERVER_NA = "n/a: the server applies the constraint and returns no mask"


def _group(name: str, tolls: list[MaskToll]) -> TollGroup:
    means = np.array([t.mean_share for t in tolls], dtype=np.float64)
    mins = np.array([t.min_share for t in tolls], dtype=np.float64)
    refused = sum(1 for t in tolls if t.refused_top)
    firsts = [t.first_refused_step for t in tolls if t.first_refused_step is not None]
    places = Counter(t.first_refused_at for t in tolls if t.first_refused_at is not None)
    n = len(tolls)
    if not n:  # nothing to average: n/a (None), not a share of 0.0 [0.0, 0.0]
        return TollGroup(group=name, n=0, mean_share=None, mean_share_ci95=None, min_share=None,
                         min_share_ci95=None, refused_items=0, refused_items_ci95=None, steps=None,
                         refused_steps=None, first_refused_step=None, first_refused_at=[], quantiles=[])
    return TollGroup(
        group=name, n=n, mean_share=float(means.mean()), mean_share_ci95=item_share_interval(means),
        min_share=float(mins.mean()), min_share_ci95=item_share_interval(mins),
        refused_items=refused, refused_items_ci95=wilson(refused, n),
        steps=sum(t.steps for t in tolls) / n,
        refused_steps=sum(t.refused_top for t in tolls) / n,
        first_refused_step=float(statistics.median(firsts)) if firsts else None,
        first_refused_at=sorted(places.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_PLACES],
        quantiles=[compact(float(q)) for q in np.percentile(means, QUANTILES)])


def _part(rows: list[ScoredGeneration]) -> tuple[str, dict[int, MaskToll]]:
    """Which part of each row's toll the figures read, and the tolls by row
    index: a thinking arm's answer part where the replay recorded one."""
    thinks = any(r.thinking is not None for r in rows)
    if thinks and any(r.mask_toll is not None and r.mask_toll.answer is not None for r in rows):
        return "answer", {i: r.mask_toll.answer for i, r in enumerate(rows)
                          if r.mask_toll is not None and r.mask_toll.answer is not None}
    tolls = {i: r.mask_toll for i, r in enumerate(rows) if r.mask_toll is not None}
    return "thinking and answer" if thinks and tolls else "call", tolls


def _arm(condition: Condition, rows: list[ScoredGeneration]) -> TollArm:
    part, tolls = _part(rows)
    arm = TollArm(key=condition.key, engine=condition.engine, n=len(rows), measured=len(tolls), part=part)
    if condition.engine == SERVER_ENGINE:
        return arm.model_copy(update={"na": SERVER_NA})
    if not tolls:
        return arm.model_copy(update={"na": NOT_MEASURED})
    groups = [_group(name, [t for i, t in tolls.items() if keep(rows[i])]) for name, keep in GROUPS]
    return arm.model_copy(update={"groups": [g for g in groups if g.n or g.group != "valid"]})


def toll_data(table: ScoredTable) -> TollData | None:
    """The section's data; None when no constrained arm has a toll or is
    decoded by a server (replays made before the toll was recorded keep
    the report they had)."""
    arms = [_arm(c, table.column(c)) for c in table.conditions if c.engine is not None]
    if not any(a.measured or a.engine == SERVER_ENGINE for a in arms):
        return None
    return TollData(arms=arms)


def _share(value: float | None, ci: tuple[float, float] | None) -> str:
    return "n/a" if value is None or ci is None else rate_ci(value, ci)


def _per_item(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}"


@sections.register("mask_toll")
class TollSection(Section[TollData]):
    title = "The mask's toll"
    data_model = TollData

    def applies_to(self, task_name: str) -> bool:
        return True

    def compute(self, table: ScoredTable) -> TollData | None:
        return toll_data(table)

    def terminal(self, data: TollData) -> list[str]:
        lines = []
        for a in data.arms:
            if a.na:
                lines.append(f"mask's toll, {a.key}: {a.na}")
                continue
            parts = [f"{g.group} {100 * g.mean_share:.1f}% (N={g.n})" for g in a.groups
                     if g.group != "all" and g.mean_share is not None]
            over = f" over the {a.part}" if a.part != "call" else ""
            lines.append(f"mask's toll, {a.key}: mean allowed share{over} " + ", ".join(parts))
        return lines

    def markdown(self, data: TollData) -> str:
        head = ["arm", "answers", "N", "mean allowed share [95% CI]", "mean of the smallest share [95% CI]",
                "top token refused: items [95% CI]", "steps/item", "refused steps/item",
                "median first refused step", "first refused at"]
        lines = ["At each step under the grammar, the share of the model's probability (softmax of its raw "
                 "logits, temperature 1) that the grammar allowed, and whether the model's own top token was "
                 "allowed; per answer its mean and smallest share, averaged over the answers of each group. "
                 "Intervals: Wilson over the items (shares taken as fractional successes). A thinking arm "
                 "(think_then_constrain) is read over its answer's steps alone, those after the stop string "
                 "(its free text, allowed almost whole, would dilute the mean); its first refused step is "
                 "counted from the answer's first step.", "",
                 "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for a in data.arms:
            if a.na:
                lines.append(f"| {md_code(a.key)} | {md_text(a.na)} |" + " |" * (len(head) - 2))
                continue
            label = f"{md_code(a.key)}" + (f" ({a.part})" if a.part != "call" else "")
            for g in a.groups:
                if not g.n:
                    lines.append(f"| {label} | {md_text(g.group)} | 0 |" + " — |" * (len(head) - 3))
                    continue
                first = "n/a" if g.first_refused_step is None else f"{g.first_refused_step:g}"
                places = ", ".join(f"{md_code(p or '(root)')} {k}" for p, k in g.first_refused_at) or "n/a"
                cells = [label, md_text(g.group), str(g.n), _share(g.mean_share, g.mean_share_ci95),
                         _share(g.min_share, g.min_share_ci95),
                         f"{g.refused_items} {_share(g.refused_items / g.n, g.refused_items_ci95)}",
                         _per_item(g.steps), _per_item(g.refused_steps), first, places]
                lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines) + "\n"

    def html(self, data: TollData) -> str:
        chart = toll_svg([("allowed share per answer, by how it scored", data)], standalone=False)
        return f'<div class="plot">{chart}</div>' + markdown_html(self.markdown(data))
