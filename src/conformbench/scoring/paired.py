"""Paired comparisons between conditions of one task on one model.

The headline comparison switches only the grammar: prompt_only[S] ->
constrained[S] (same contract, format cell and shots). Comparisons against
unconstrained change the prompt too and are labelled "confounded". Deltas get
paired intervals (the bootstrap, all statistics of a table in one matrix
product, over many items and discordant pairs; Newcombe's score interval
otherwise: ``stats.paired_method``), exact McNemar p-values, and the N the
question needs (``scoring.power``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from conformbench.arms.base import arms
from conformbench.records.items import Condition
from conformbench.records.results import Comparison, Delta, Flips
from conformbench.scoring.intervals import (
    mcnemar_exact,
    newcombe_paired,
    paired_bootstrap,
    paired_method,
    resample_weights,
)
from conformbench.scoring.metrics import Bools, Outcomes, outcomes_of, state_labels
from conformbench.scoring.power import ALPHA, items_needed, min_detectable
from conformbench.scoring.table import ScoredTable

__all__ = ["DEFAULT_DETECT", "METRICS", "comparisons", "paired_delta", "pairs"]

#: the difference (10 points) whose items-needed a comparison states when
#: the user names none (--detect)
DEFAULT_DETECT = 0.10

#: metrics compared, in report order
METRICS = ("accuracy", "validity", "wrong_but_valid", "executable_accuracy")


@dataclass(frozen=True)
class _Pair:
    before: Condition
    after: Condition
    role: str


def _cell(c: Condition) -> tuple[str | None, str | None, int]:
    return (c.text_axis("schema_format"), c.text_axis("output_format"), c.count_axis("shots"))


def _baseline(cond: Condition, free: list[Condition]) -> Condition | None:
    for found in (
        [f for f in free if _cell(f) == _cell(cond)],
        [f for f in free if f.cell_key == "" and f.count_axis("shots") == cond.count_axis("shots")],
    ):
        if found:
            return found[0]
    return None


def _twins(cond: Condition, arm_name: str, conditions: tuple[Condition, ...]) -> list[Condition]:
    """The conditions of arm ``arm_name`` with ``cond``'s contract and cell."""
    return [p for p in conditions
            if p.arm == arm_name and p.contract == cond.contract and _cell(p) == _cell(cond)]


def pairs(conditions: tuple[Condition, ...]) -> list[_Pair]:
    """Headline pairs first (only the grammar differs), then a multi-round
    arm against the arms it is compared with (``Arm.compare_with``: repair
    against prompt_only and constrained), then the confounded ones, in
    condition order."""
    headline: list[_Pair] = []
    policy: list[_Pair] = []
    confounded: list[_Pair] = []
    free = [c for c in conditions if c.arm == "unconstrained"]
    for cond in conditions:
        arm = arms.get(cond.arm) if cond.arm in arms else None
        if arm is None or arm.contracts == "none":
            continue
        if arm.grammar_twin is not None:
            headline += [_Pair(p, cond, "headline") for p in _twins(cond, arm.grammar_twin, conditions)]
        for other in arm.compare_with:
            policy += [_Pair(p, cond, "policy") for p in _twins(cond, other, conditions)]
        base = _baseline(cond, free)
        if base is not None:
            confounded.append(_Pair(base, cond, "confounded"))
    return headline + policy + confounded


def _vectors(o: Outcomes) -> dict[str, Bools | None]:
    return {"accuracy": o.correct, "validity": o.valid,
            "wrong_but_valid": o.wrong_but_valid, "executable_accuracy": o.executable}


def _flips(a: Outcomes, b: Outcomes) -> Flips | None:
    if a.correct is None or b.correct is None:
        return None
    return Flips(right_to_wrong=int((a.correct & ~b.correct).sum()),
                 wrong_to_right=int((~a.correct & b.correct).sum()))


def comparisons(table: ScoredTable, detect: float = DEFAULT_DETECT) -> list[Comparison]:
    """Every pair over the items both of its conditions have. Pairs over the
    same number of items share one bootstrap matrix product. ``detect``: the
    difference (a share) whose items-needed each delta states."""
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
            deltas.append(_delta(metric, a, b, (float(lo), float(hi)), detect))
        result.append(_comparison(pair, n, deltas, a_out, b_out))
    return result


def paired_delta(metric: str, a: Bools, b: Bools, detect: float = DEFAULT_DETECT) -> Delta:
    """One metric's paired difference (``b`` - ``a`` over aligned items) by
    the rule every comparison uses: the paired bootstrap over many items and
    discordant pairs, Newcombe's interval otherwise (``stats.paired_method``)."""
    n = int(a.size)
    boot = (0.0, 0.0)
    if paired_method(n, int((a & ~b).sum()), int((~a & b).sum())) == "bootstrap":
        diff = (b.astype(np.float64) - a.astype(np.float64)).reshape(1, n)
        lo, hi = paired_bootstrap(diff, resample_weights(n))[0]
        boot = (float(lo), float(hi))
    return _delta(metric, a, b, boot, detect)


def _delta(metric: str, a: Bools, b: Bools, boot: tuple[float, float], detect: float) -> Delta:
    before, after = float(a.mean()), float(b.mean())
    n = int(a.size)
    dis = (int((a & ~b).sum()), int((~a & b).sum()))
    method = paired_method(n, *dis)
    ci = boot if method == "bootstrap" else _newcombe(a, b)
    excludes = ci[0] > 0 or ci[1] < 0
    p = mcnemar_exact(*dis)
    psi = (dis[0] + dis[1]) / n
    return Delta(metric=metric, from_rate=before, to_rate=after, delta=after - before,
                 ci95=ci, excludes_0=excludes, discordant=dis, mcnemar_p=p, method=method,
                 detected=excludes and p < ALPHA, mdd80=min_detectable(n, psi),
                 detect=detect, n_needed=items_needed(psi, detect))


def _newcombe(a: Bools, b: Bools) -> tuple[float, float]:
    counts = [int((x & y).sum()) for x, y in ((a, b), (a, ~b), (~a, b), (~a, ~b))]
    lo, hi = newcombe_paired(*(np.array([k]) for k in counts))
    return (float(lo[0]), float(hi[0]))


def _comparison(pair: _Pair, n: int, deltas: list[Delta], a: Outcomes, b: Outcomes) -> Comparison:
    moves = Counter(f"{x} -> {y}" for x, y in zip(state_labels(a), state_labels(b)))
    return Comparison(
        from_key=pair.before.key, to_key=pair.after.key,
        role="headline" if pair.role == "headline" else "policy" if pair.role == "policy" else "confounded",
        n=n, deltas=deltas, transitions=dict(sorted(moves.items())), flips=_flips(a, b),
    )
