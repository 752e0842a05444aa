"""Report section of the BFCL v4 tasks: the call metrics per arm, with 95%
Wilson intervals, and paired comparisons between arms.

Per condition (every rate says its own n):
- call decision: called where a function fits, did not where none does (all N);
- right function: the functions called are the expected ones (items where a call is right);
- arguments valid: every call names an offered function and its arguments
  pass that function's schema (items where the answer made a call);
- AST accuracy: BFCL's verdict (all N);
- wrong-but-valid: a valid answer that is wrong (all N): the envelope's
  schema where the answer was JSON text, else the arguments' validity.

Each answer's calls are what ``ItemScore.answer`` recorded (a list of
``{name, arguments}``; None: unreadable, counted as no call, as BFCL does);
the call metrics come from ``bfcl.calls.verdicts.score_calls`` on them.
"""

from __future__ import annotations

import itertools
from typing import ClassVar

import numpy as np
from pydantic import BaseModel

from conformbench.records.results import Delta, Rate
from conformbench.scoring.intervals import wilson
from conformbench.scoring.paired import paired_delta
from conformbench.scoring.sections import Section, md_text, sections
from conformbench.scoring.table import ScoredGeneration, ScoredTable
from conformbench.tasks.base import tasks
from conformbench.tasks.bfcl.calls import CallAnswer, CallScore
from conformbench.tasks.bfcl.calls.verdicts import score_calls
from conformbench.tasks.bfcl.v4_data import item_from_json

__all__ = ["CallArm", "CallPair", "CallsData", "CallsSection"]

_PAIRED = ("call_decision", "accuracy")


class CallArm(BaseModel):
    condition: str
    n: int
    decision: Rate
    right_function: Rate | None
    arguments_valid: Rate | None
    accuracy: Rate
    wrong_but_valid: Rate
    #: answers nothing could be read from (counted as no call)
    unreadable: int


class CallPair(BaseModel):
    """``to`` against ``from_``, on the items both have."""

    from_: str
    to: str
    n: int
    deltas: list[Delta]


class CallsData(BaseModel):
    category: str
    #: items where a call is right / where none is
    relevant: int
    irrelevant: int
    arms: list[CallArm]
    pairs: list[CallPair]


def _rate(flags: list[bool]) -> Rate | None:
    if not flags:
        return None
    k, n = sum(flags), len(flags)
    return Rate(k=k, n=n, rate=k / n, ci95=wilson(k, n))


def _call_score(row: ScoredGeneration) -> CallScore:
    item = item_from_json(row.item.id, row.item.input)
    try:
        answer = CallAnswer.from_json(row.score.answer)
    except Exception:  # noqa: BLE001 - an answer of another shape reads as unreadable
        answer = CallAnswer((), readable=False)
    return score_calls(item, answer)


def _valid(row: ScoredGeneration, scored: CallScore) -> bool:
    return bool(row.score.valid) if row.score.valid is not None else scored.arguments_valid is True


def _arm(key: str, rows: list[ScoredGeneration]) -> CallArm:
    scores = [_call_score(r) for r in rows]
    decision = _rate([s.decision_right for s in scores])
    accuracy = _rate([s.correct for s in scores])
    wbv = _rate([_valid(r, s) and not s.correct for r, s in zip(rows, scores)])
    assert decision is not None and accuracy is not None and wbv is not None
    return CallArm(
        condition=key, n=len(rows), decision=decision,
        right_function=_rate([s.right_function for s in scores if s.right_function is not None]),
        arguments_valid=_rate([s.arguments_valid for s in scores if s.arguments_valid is not None]),
        accuracy=accuracy, wrong_but_valid=wbv,
        unreadable=sum(1 for r in rows if r.score.answer is None))


def _pair(table: ScoredTable, a_key: str, b_key: str) -> CallPair | None:
    by_key = {c.key: c for c in table.conditions}
    rows_a, rows_b = table.paired(by_key[a_key], by_key[b_key])
    if not rows_a:
        return None
    a = [_call_score(r) for r in rows_a]
    b = [_call_score(r) for r in rows_b]
    deltas = []
    for metric in _PAIRED:
        decision = metric == "call_decision"
        before = [s.decision_right if decision else s.correct for s in a]
        after = [s.decision_right if decision else s.correct for s in b]
        deltas.append(paired_delta(metric, np.array(before, dtype=np.bool_), np.array(after, dtype=np.bool_)))
    return CallPair(from_=a_key, to=b_key, n=len(rows_a), deltas=deltas)


@sections.register("bfcl_calls")
class CallsSection(Section[CallsData]):
    title = "Function calls: decision, function, arguments, AST match"
    data_model = CallsData
    gate_metrics: ClassVar[tuple[str, ...]] = ()

    def applies_to(self, task_name: str) -> bool:
        return task_name in tasks.names() and getattr(tasks.get(task_name), "category", None) is not None

    def compute(self, table: ScoredTable) -> CallsData | None:
        columns = [(c.key, table.column(c)) for c in table.conditions]
        columns = [(k, rows) for k, rows in columns if rows]
        if not columns:
            return None
        first = columns[0][1]
        relevant = sum(1 for r in first if r.item.input.get("possible"))
        arms = [_arm(k, rows) for k, rows in columns]
        pairs = [p for a, b in itertools.combinations([k for k, _ in columns], 2)
                 if (p := _pair(table, a, b)) is not None]
        category = str(first[0].item.input.get("category"))
        return CallsData(category=category, relevant=relevant, irrelevant=len(first) - relevant,
                         arms=arms, pairs=pairs)

    def markdown(self, data: CallsData) -> str:
        lines = [f"BFCL v4 `{md_text(data.category)}`: {data.relevant} items where a call is right, "
                 f"{data.irrelevant} where none is. Rates with 95% Wilson intervals; each says its n.", "",
                 "| condition | N | call decision | right function | arguments valid | AST accuracy "
                 "| wrong-but-valid | unreadable |", "|---|---|---|---|---|---|---|---|"]
        for arm in data.arms:
            lines.append(f"| `{md_text(arm.condition)}` | {arm.n} | {_pct(arm.decision)} | "
                         f"{_pct(arm.right_function)} | {_pct(arm.arguments_valid)} | {_pct(arm.accuracy)} | "
                         f"{_pct(arm.wrong_but_valid)} | {arm.unreadable} |")
        if data.pairs:
            lines += ["", "Paired (to − from, same items; 95% interval, exact McNemar p):", "",
                      "| from | to | N | metric | from | to | Δ [95%] | p |", "|---|---|---|---|---|---|---|---|"]
            for pair in data.pairs:
                for d in pair.deltas:
                    lines.append(f"| `{md_text(pair.from_)}` | `{md_text(pair.to)}` | {pair.n} | {d.metric} | "
                                 f"{d.from_rate:.0%} | {d.to_rate:.0%} | {d.delta:+.0%} "
                                 f"[{d.ci95[0]:+.0%}, {d.ci95[1]:+.0%}] | {d.mcnemar_p:.3g} |")
        return "\n".join(lines) + "\n"


def _pct(rate: Rate | None) -> str:
    if rate is None:
        return "n/a"
    return f"{rate.rate:.0%} ({rate.k}/{rate.n}) [{rate.ci95[0]:.0%}, {rate.ci95[1]:.0%}]"
