"""Paired comparisons between conditions of one task on one model.

The headline comparison switches only the grammar: prompt_only[S] ->
constrained[S] (same contract, format cell and shots). Comparisons against
unconstrained change the prompt too and are labelled "confounded". Deltas get
paired bootstrap intervals (all statistics of a table in one matrix product)
and exact McNemar p-values.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from conformbench.arms import arms
from conformbench.records.items import Condition
from conformbench.records.results import Comparison, Delta, Flips
from conformbench.scoring.metrics import Bools, Outcomes, outcomes_of, state_labels
from conformbench.scoring.stats import mcnemar_exact, paired_bootstrap, resample_weights
from conformbench.scoring.table import ScoredTable

__all__ = ["METRICS", "comparisons", "pairs"]

#: metrics compared, in report order
METRICS = ("accuracy", "validity", "wrong_but_valid", "executable_accuracy")


@dataclass(frozen=True)
class _Pair:
    before: Condition
    after: Condition
    role: str


def _cell(c: Condition) -> tuple[str | None, str | None, int]:
    return (c.schema_format, c.output_format, c.shots)


def _baseline(cond: Condition, free: list[Condition]) -> Condition | None:
    for found in (
        [f for f in free if _cell(f) == _cell(cond)],
        [f for f in free if f.cell_key == "" and f.shots == cond.shots],
    ):
        if found:
            return found[0]
    return None


def pairs(conditions: tuple[Condition, ...]) -> list[_Pair]:
    """Headline pairs first, then the confounded ones, in condition order."""
    headline: list[_Pair] = []
    confounded: list[_Pair] = []
    free = [c for c in conditions if c.arm == "unconstrained"]
    for cond in conditions:
        arm = arms.get(cond.arm) if cond.arm in arms else None
        if arm is None or not arm.uses_contract:
            continue
        if arm.constrained and not arm.two_turn:
            for p in conditions:
                if (p.arm == "prompt_only" and p.contract == cond.contract
                        and _cell(p) == _cell(cond)):
                    headline.append(_Pair(p, cond, "headline"))
        base = _baseline(cond, free)
        if base is not None:
            confounded.append(_Pair(base, cond, "confounded"))
    return headline + confounded


def _vectors(o: Outcomes) -> dict[str, Bools | None]:
    return {"accuracy": o.correct, "validity": o.valid,
            "wrong_but_valid": o.wrong_but_valid, "executable_accuracy": o.executable}


def _flips(a: Outcomes, b: Outcomes) -> Flips | None:
    if a.correct is None or b.correct is None:
        return None
    return Flips(right_to_wrong=int((a.correct & ~b.correct).sum()),
                 wrong_to_right=int((~a.correct & b.correct).sum()))


def comparisons(table: ScoredTable) -> list[Comparison]:
    """Every pair over the items both of its conditions have. Pairs over the
    same number of items share one bootstrap matrix product."""
    found = pairs(table.conditions)
    sides: list[tuple[Outcomes, Outcomes]] = []
    for pair in found:
        rows_a, rows_b = table.paired(pair.before, pair.after)
        sides.append((outcomes_of(rows_a), outcomes_of(rows_b)))
    plans: list[list[tuple[str, Bools, Bools]]] = []
    by_n: dict[int, list[np.ndarray]] = {}
    for a_out, b_out in sides:
        va, vb = _vectors(a_out), _vectors(b_out)
        plan: list[tuple[str, Bools, Bools]] = []
        for m in METRICS:
            a_vec, b_vec = va[m], vb[m]
            if a_vec is not None and b_vec is not None:
                plan.append((m, a_vec, b_vec))
        plans.append(plan)
        for _metric, a, b in plan:
            by_n.setdefault(a.size, []).append(b.astype(np.float64) - a.astype(np.float64))
    cis = {n: iter(paired_bootstrap(np.array(rows).reshape(len(rows), n), resample_weights(n)))
           for n, rows in by_n.items() if n > 0}
    result = []
    for pair, (a_out, b_out), plan in zip(found, sides, plans):
        n = a_out.truncated.size
        if n == 0:
            continue
        deltas = []
        for metric, a, b in plan:
            lo, hi = next(cis[n])
            deltas.append(_delta(metric, a, b, (float(lo), float(hi))))
        result.append(_comparison(pair, n, deltas, a_out, b_out))
    return result


def _delta(metric: str, a: Bools, b: Bools, ci: tuple[float, float]) -> Delta:
    before, after = float(a.mean()), float(b.mean())
    dis = (int((a & ~b).sum()), int((~a & b).sum()))
    return Delta(metric=metric, from_rate=before, to_rate=after, delta=after - before,
                 ci95=ci, excludes_0=ci[0] > 0 or ci[1] < 0, discordant=dis,
                 mcnemar_p=mcnemar_exact(*dis))


def _comparison(pair: _Pair, n: int, deltas: list[Delta], a: Outcomes, b: Outcomes) -> Comparison:
    moves = Counter(f"{x} -> {y}" for x, y in zip(state_labels(a), state_labels(b)))
    return Comparison(
        from_key=pair.before.key, to_key=pair.after.key,
        role="headline" if pair.role == "headline" else "confounded",
        n=n, deltas=deltas, transitions=dict(sorted(moves.items())), flips=_flips(a, b),
    )
