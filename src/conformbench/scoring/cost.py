"""What each arm costs and what its rounds buy: per arm, the mean model
calls, rounds, prompt tokens, generated tokens and seconds per item, the
same per valid and per right answer, and validity, accuracy and
wrong-but-valid after each round (an item whose arm stopped earlier keeps
its last answer). Every rate is over all N items of the arm.

Costs are what running the arm alone costs: a turn another arm's identical
turn generated once (repair's first round is prompt_only's answer) is
counted for both, and ``shared_calls`` says how many such calls the run
itself made only once. A packaged free step (reason_then_constrain) is a
call, costed as its answer's record says (``GenerationRecord.step``), or in
a replay made before steps' costs were recorded as the unconstrained answer
it reuses when the run has one; else its tokens and seconds are unknown and
the arm's token and second figures are None ("n/a"), never counted as 0.

The section is in a report only when an arm answered more than once on
some item or takes rounds (``Arm.rounds``): other reports are what they were.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from pydantic import BaseModel

from conformbench.arms.base import arms
from conformbench.records.items import Condition
from conformbench.records.results import Rate
from conformbench.scoring.intervals import wilson
from conformbench.scoring.table import ScoredGeneration, ScoredTable
from conformbench.tasks.base import zero_by_definition

__all__ = ["ArmCost", "CostData", "RoundRates", "cost_data"]


class RoundRates(BaseModel):
    """The arm's rates once every item has had ``round`` + 1 chances."""

    round: int
    validity: Rate | None
    accuracy: Rate | None
    wrong_but_valid: Rate | None
    #: items still answering in this round
    answered: int
    #: answers that did not parse in the output format (ConCodeEval's IS%)
    #: and of a wrong root type (RTV%; None where the task does not say)
    unparsed: Rate | None = None
    root_type_wrong: Rate | None = None


class ArmCost(BaseModel):
    key: str
    n: int
    #: means per item, and the mean calls' 95% interval (normal approximation)
    calls: float
    calls_ci95: tuple[float, float]
    rounds: float
    #: None ("n/a") while a free step's cost is unknown (``unknown_step_costs``)
    prompt_tokens: float | None
    completion_tokens: float | None
    seconds: float | None
    #: calls whose text another arm's identical turn generated (made once in the run)
    shared_calls: int
    valid: int
    right: int
    #: totals per valid and per right answer (None: none was)
    calls_per_valid: float | None
    calls_per_right: float | None
    tokens_per_valid: float | None
    tokens_per_right: float | None
    seconds_per_valid: float | None
    seconds_per_right: float | None
    accuracy: Rate | None
    by_round: list[RoundRates]
    #: items whose free step's tokens and seconds the replay does not hold
    #: (made before they were recorded, no identical unconstrained answer):
    #: while any is, prompt_tokens, completion_tokens, seconds and the token
    #: and second figures per valid and per right are None ("n/a")
    unknown_step_costs: int = 0
    #: free steps cut at their budget or in a loop (finish reason "length" or
    #: "loop"; of the steps whose finish reason is known)
    steps_cut: int = 0


class CostData(BaseModel):
    arms: list[ArmCost]


class _Step(NamedTuple):
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    cut: bool


class _ItemCost(NamedTuple):
    calls: int
    #: None: a free step's cost is unknown
    prompt_tokens: int | None
    completion_tokens: int | None
    seconds: float | None
    step_cut: bool = False


def _step_cost(row: ScoredGeneration, table: ScoredTable) -> _Step | None:
    """What the free step a packaged answer used cost: as its record holds
    it; in an older replay, as the unconstrained answer of identical text
    it reused; else None (unknown: never 0)."""
    if row.step is not None:
        s = row.step
        return _Step(s.prompt_tokens, s.completion_tokens, s.seconds, s.finish_reason in ("length", "loop"))
    for cond in table.conditions:
        if cond.arm == "unconstrained" and table.has(row.item_id, cond):
            free = table.row(row.item_id, cond)
            if free.text == row.free_text:
                return _Step(free.prompt_tokens, free.completion_tokens, free.seconds,
                             free.finish_reason in ("length", "loop"))
    return None


def _costs(row: ScoredGeneration, table: ScoredTable) -> _ItemCost:
    """One item's calls, prompt tokens, generated tokens and seconds."""
    rounds = row.rounds
    calls = len(rounds)
    prompt = sum(r.prompt_tokens for r in rounds)
    completion = sum(r.completion_tokens for r in rounds)
    seconds = sum(r.seconds for r in rounds)
    if row.free_text is None:
        return _ItemCost(calls, prompt, completion, seconds)
    step = _step_cost(row, table)
    if step is None:  # the step's call happened; what it cost is not known
        return _ItemCost(calls + 1, None, None, None)
    return _ItemCost(calls + 1, prompt + step.prompt_tokens, completion + step.completion_tokens,
                     seconds + step.seconds, step.cut)


def _rate(flags: list[bool | None]) -> Rate | None:
    if not flags or all(f is None for f in flags):
        return None
    k, n = sum(f is True for f in flags), len(flags)
    return Rate(k=k, n=n, rate=k / n, ci95=wilson(k, n))


def _by_round(rows: list[ScoredGeneration], wbv_defined: bool = True) -> list[RoundRates]:
    """Rates after each round; ``wbv_defined`` False where the task makes
    wrong-but-valid 0 by definition (n/a then, not a measured 0)."""
    depth = max((len(r.rounds) for r in rows), default=0)
    out = []
    for r in range(depth):
        scores = [row.rounds[min(r, len(row.rounds) - 1)].score for row in rows]
        valid = [s.valid for s in scores]
        correct = [s.correct for s in scores]
        wbv = [None if v is None or c is None or not wbv_defined else (v is True and c is not True)
               for v, c in zip(valid, correct)]
        rtv = [None if s.root_type_ok is None else not s.root_type_ok for s in scores]
        out.append(RoundRates(round=r, validity=_rate(valid), accuracy=_rate(correct),
                              wrong_but_valid=_rate(wbv), unparsed=_rate([not s.parsed for s in scores]),
                              root_type_wrong=_rate(rtv), answered=sum(len(row.rounds) > r for row in rows)))
    return out


def _per(total: float | None, count: int) -> float | None:
    return total / count if count and total is not None else None


def _mean_ci(values: list[int]) -> tuple[float, float]:
    n = len(values)
    if n < 2:
        return (float(values[0]), float(values[0])) if values else (0.0, 0.0)
    mean, sd = float(np.mean(values)), float(np.std(values, ddof=1))
    half = 1.96 * sd / math.sqrt(n)
    return (mean - half, mean + half)


def _mean(values: list[int] | list[float]) -> float:
    return float(np.mean(values)) if values else 0.0


def _known(costs: list[_ItemCost]) -> tuple[list[int], list[int], list[float]] | None:
    """The items' prompt tokens, generated tokens and seconds (None: one is unknown)."""
    prompt, completion, seconds = [], [], []
    for c in costs:
        if c.prompt_tokens is None or c.completion_tokens is None or c.seconds is None:
            return None
        prompt.append(c.prompt_tokens)
        completion.append(c.completion_tokens)
        seconds.append(c.seconds)
    return prompt, completion, seconds


def arm_cost(table: ScoredTable, cond: Condition) -> ArmCost:
    rows = table.column(cond)
    costs = [_costs(r, table) for r in rows]
    n = len(rows)
    calls = [c.calls for c in costs]
    known = _known(costs)
    valid = sum(r.score.valid is True for r in rows)
    right = sum(r.score.correct is True for r in rows)
    tokens = None if known is None else sum(known[0]) + sum(known[1])
    seconds = None if known is None else sum(known[2])
    return ArmCost(
        key=cond.key, n=n, calls=_mean(calls), calls_ci95=_mean_ci(calls),
        rounds=_mean([len(r.rounds) for r in rows]),
        prompt_tokens=None if known is None else _mean(known[0]),
        completion_tokens=None if known is None else _mean(known[1]),
        seconds=None if known is None else _mean(known[2]),
        shared_calls=sum(x.shared for r in rows for x in r.rounds),
        valid=valid, right=right,
        calls_per_valid=_per(sum(calls), valid), calls_per_right=_per(sum(calls), right),
        tokens_per_valid=_per(tokens, valid), tokens_per_right=_per(tokens, right),
        seconds_per_valid=_per(seconds, valid), seconds_per_right=_per(seconds, right),
        accuracy=_rate([r.score.correct for r in rows]), by_round=_by_round(rows, "wrong_but_valid" not in zero_by_definition(table.task)),
        unknown_step_costs=sum(c.prompt_tokens is None for c in costs),
        steps_cut=sum(c.step_cut for c in costs),
    )


def has_rounds(table: ScoredTable) -> bool:
    """Whether some arm answered more than once, takes rounds, or is
    compared with other arms on cost (think_then_constrain: one call
    against reason_then_constrain's two)."""
    if any(r.earlier for r in table.rows):
        return True
    return any(c.arm in arms and (arms.get(c.arm).rounds or arms.get(c.arm).compare_with)
               for c in table.conditions)


def cost_data(table: ScoredTable) -> CostData | None:
    if not has_rounds(table):
        return None
    return CostData(arms=[arm_cost(table, c) for c in table.conditions if table.column(c)])
