"""What each arm costs and what its rounds buy: per arm, the mean model
calls, rounds, prompt tokens, generated tokens and seconds per item, the
same per valid and per right answer, and validity, accuracy and
wrong-but-valid after each round (an item whose arm stopped earlier keeps
its last answer). Every rate is over all N items of the arm.

Costs are what running the arm alone costs: a turn another arm's identical
turn generated once (repair's first round is prompt_only's answer) is
counted for both, and ``shared_calls`` says how many such calls the run
itself made only once. A packaged free step (reason_then_constrain) is a
call, costed as the unconstrained answer it reuses when the run has it.

The section is in a report only when an arm answered more than once on
some item or takes rounds (``Arm.rounds``): other reports are what they were.
"""

from __future__ import annotations

import math

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
    prompt_tokens: float
    completion_tokens: float
    seconds: float
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


class CostData(BaseModel):
    arms: list[ArmCost]


def _step_cost(row: ScoredGeneration, table: ScoredTable) -> tuple[int, int, float]:
    """Tokens and seconds of the free step a packaged answer reuses."""
    for cond in table.conditions:
        if cond.arm == "unconstrained" and table.has(row.item_id, cond):
            free = table.row(row.item_id, cond)
            if free.text == row.free_text:
                return free.prompt_tokens, free.completion_tokens, free.seconds
    return 0, 0, 0.0


def _costs(row: ScoredGeneration, table: ScoredTable) -> tuple[int, int, int, float]:
    """(calls, prompt tokens, generated tokens, seconds) of one item."""
    rounds = row.rounds
    calls = len(rounds)
    prompt = sum(r.prompt_tokens for r in rounds)
    completion = sum(r.completion_tokens for r in rounds)
    seconds = sum(r.seconds for r in rounds)
    if row.free_text is not None:
        p, c, s = _step_cost(row, table)
        calls, prompt, completion, seconds = calls + 1, prompt + p, completion + c, seconds + s
    return calls, prompt, completion, seconds


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


def _per(total: float, count: int) -> float | None:
    return total / count if count else None


def _mean_ci(values: list[int]) -> tuple[float, float]:
    n = len(values)
    if n < 2:
        return (float(values[0]), float(values[0])) if values else (0.0, 0.0)
    mean, sd = float(np.mean(values)), float(np.std(values, ddof=1))
    half = 1.96 * sd / math.sqrt(n)
    return (mean - half, mean + half)


def arm_cost(table: ScoredTable, cond: Condition) -> ArmCost:
    rows = table.column(cond)
    costs = [_costs(r, table) for r in rows]
    n = len(rows)
    calls = [c[0] for c in costs]
    tokens = sum(c[1] + c[2] for c in costs)
    seconds = sum(c[3] for c in costs)
    valid = sum(r.score.valid is True for r in rows)
    right = sum(r.score.correct is True for r in rows)
    return ArmCost(
        key=cond.key, n=n, calls=float(np.mean(calls)) if n else 0.0, calls_ci95=_mean_ci(calls),
        rounds=float(np.mean([len(r.rounds) for r in rows])) if n else 0.0,
        prompt_tokens=float(np.mean([c[1] for c in costs])) if n else 0.0,
        completion_tokens=float(np.mean([c[2] for c in costs])) if n else 0.0,
        seconds=float(np.mean([c[3] for c in costs])) if n else 0.0,
        shared_calls=sum(x.shared for r in rows for x in r.rounds),
        valid=valid, right=right,
        calls_per_valid=_per(sum(calls), valid), calls_per_right=_per(sum(calls), right),
        tokens_per_valid=_per(tokens, valid), tokens_per_right=_per(tokens, right),
        seconds_per_valid=_per(seconds, valid), seconds_per_right=_per(seconds, right),
        accuracy=_rate([r.score.correct for r in rows]), by_round=_by_round(rows, "wrong_but_valid" not in zero_by_definition(table.task)),
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
