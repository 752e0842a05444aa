"""Report section of the tools arms on a BFCL v4 task: what forcing a call
buys and what it costs, each as its own line.

For each forced tools arm (``tools[required]``, ``tools[named]``) beside
``tools[auto]`` with the same ``strict``, paired on the same items:

- on the items where a function fits: the call decision and AST accuracy,
  auto → forced (what forcing buys);
- on the items where none fits (``bfcl-irrelevance``): the call decision,
  auto → forced (what forcing costs: every forced call there is wrong and
  passes every validity check). A task without such items says so in its
  line: the cost is measured on ``bfcl-irrelevance``.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from pydantic import BaseModel

from conformbench.records.items import Condition
from conformbench.records.results import Delta
from conformbench.records.tool_calls import parse_tool_mode
from conformbench.scoring.paired import paired_delta
from conformbench.scoring.sections import Section, md_text, sections
from conformbench.scoring.table import ScoredGeneration, ScoredTable
from conformbench.tasks.base import tasks
from conformbench.tasks.bfcl.calls import CallAnswer, CallScore
from conformbench.tasks.bfcl.calls.verdicts import score_calls
from conformbench.tasks.bfcl.v4_data import item_from_json

__all__ = ["ForcingData", "ForcingLine", "ForcingSection"]


class ForcingLine(BaseModel):
    """auto → forced on one side of the items (relevant or irrelevant)."""

    auto: str
    forced: str
    side: str
    #: paired items on this side (0: the task has none)
    n: int
    deltas: list[Delta]


class ForcingData(BaseModel):
    lines: list[ForcingLine]


def _scores(rows: list[ScoredGeneration]) -> list[CallScore]:
    out = []
    for row in rows:
        try:
            answer = CallAnswer.from_json(row.score.answer)
        except Exception:  # noqa: BLE001 - an answer of another shape reads as unreadable (no call)
            answer = CallAnswer((), readable=False)
        out.append(score_calls(item_from_json(row.item.id, row.item.input), answer))
    return out


def _pairs(conditions: tuple[Condition, ...]) -> list[tuple[Condition, Condition]]:
    tooled = [(c, parse_tool_mode(c.mode)) for c in conditions if c.mode is not None]
    autos = {m.strict: c for c, m in tooled if m.choice == "auto"}
    return [(autos[m.strict], c) for c, m in tooled if m.choice != "auto" and m.strict in autos]


def _flag(score: CallScore, metric: str) -> bool:
    return score.decision_right if metric == "call_decision" else score.correct


def _line(auto: Condition, forced: Condition, side: str, a: list[CallScore], b: list[CallScore]) -> ForcingLine:
    deltas = []
    if a:
        metrics = ("call_decision", "accuracy") if side == "relevant" else ("call_decision",)
        for metric in metrics:
            deltas.append(paired_delta(metric, np.array([_flag(s, metric) for s in a], dtype=np.bool_),
                                       np.array([_flag(s, metric) for s in b], dtype=np.bool_)))
    return ForcingLine(auto=auto.key, forced=forced.key, side=side, n=len(a), deltas=deltas)


@sections.register("tools_forcing")
class ForcingSection(Section[ForcingData]):
    title = "Forcing a call through the tools API: what it buys, what it costs"
    data_model = ForcingData
    gate_metrics: ClassVar[tuple[str, ...]] = ()

    def applies_to(self, task_name: str) -> bool:
        return task_name in tasks.names() and getattr(tasks.get(task_name), "category", None) is not None

    def compute(self, table: ScoredTable) -> ForcingData | None:
        lines: list[ForcingLine] = []
        for auto, forced in _pairs(table.conditions):
            rows_a, rows_b = table.paired(auto, forced)
            a, b = _scores(rows_a), _scores(rows_b)
            expects = [bool(r.item.input.get("possible")) for r in rows_a]
            for side, keep in (("relevant", True), ("irrelevant", False)):
                chosen = [i for i, e in enumerate(expects) if e is keep]
                lines.append(_line(auto, forced, side, [a[i] for i in chosen], [b[i] for i in chosen]))
        return ForcingData(lines=lines) if lines else None

    def markdown(self, data: ForcingData) -> str:
        return "\n".join(f"- {md_text(text)}" for text in self._texts(data)) + "\n"

    def terminal(self, data: ForcingData) -> list[str]:
        return self._texts(data)

    def _texts(self, data: ForcingData) -> list[str]:
        out = []
        for line in data.lines:
            head = f"forcing ({line.auto} -> {line.forced})"
            if line.side == "irrelevant" and not line.n:
                out.append(f"{head}, cost on irrelevance: not measured here (no item of this task has no fitting "
                           "function; run bfcl-irrelevance)")
                continue
            said = "; ".join(f"{d.metric} {d.from_rate:.0%} -> {d.to_rate:.0%} ({d.delta:+.0%} "
                             f"[{d.ci95[0]:+.0%}, {d.ci95[1]:+.0%}], McNemar p {d.mcnemar_p:.3g})" for d in line.deltas)
            what = "cost on irrelevance" if line.side == "irrelevant" else "on items a function fits"
            out.append(f"{head}, {what}, N={line.n}: {said or 'no paired items'}")
        return out
