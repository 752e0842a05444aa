"""Per-condition metrics and the per-item ledger. Every rate is over all N
items of its condition, never over the valid subset."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from conformbench.records.items import Condition
from conformbench.records.results import ArmMetrics, LedgerRow, Quadrants, Rate, RoundState, SampleState
from conformbench.scoring.intervals import wilson
from conformbench.scoring.table import ScoredGeneration, ScoredTable

__all__ = ["Outcomes", "arm_metrics", "ledger", "outcomes", "outcomes_of", "state_labels"]

Bools = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class Outcomes:
    """Boolean vectors over items for one condition; a vector is None when
    the metric is n/a for the condition (every score left it None)."""

    valid: Bools | None
    correct: Bools | None
    executable: Bools | None
    parsed: Bools | None
    #: the generation hit its token budget
    truncated: Bools
    #: the loop stop ended a degenerate loop
    looped: Bools
    #: cut inside a runaway number sequence (``scoring/runaway.py``)
    runaway: Bools
    errors: Bools

    @property
    def wrong_but_valid(self) -> Bools | None:
        if self.valid is None or self.correct is None:
            return None
        return self.valid & ~self.correct


def _vector(rows: list[ScoredGeneration], field: str) -> Bools | None:
    values = [getattr(r.score, field) for r in rows]
    if all(v is None for v in values):
        return None
    # None among defined values (e.g. unparsable output) counts as a failure
    return np.array([v is True for v in values], dtype=bool)


def outcomes(table: ScoredTable, cond: Condition) -> Outcomes:
    return outcomes_of(table.column(cond))


def outcomes_of(rows: list[ScoredGeneration]) -> Outcomes:
    return Outcomes(
        valid=_vector(rows, "valid"),
        correct=_vector(rows, "correct"),
        executable=_vector(rows, "executable"),
        parsed=np.array([r.score.parsed for r in rows], dtype=bool),
        truncated=np.array([r.finish_reason == "length" for r in rows], dtype=bool),
        looped=np.array([r.finish_reason == "loop" for r in rows], dtype=bool),
        runaway=np.array([r.runaway for r in rows], dtype=bool),
        errors=np.array([r.finish_reason == "error" for r in rows], dtype=bool),
    )


def _rate(vec: Bools | None) -> Rate | None:
    if vec is None:
        return None
    k, n = int(vec.sum()), int(vec.size)
    return Rate(k=k, n=n, rate=k / n if n else 0.0, ci95=wilson(k, n))


def _quadrants(o: Outcomes) -> Quadrants | None:
    if o.valid is None or o.correct is None:
        return None
    v, c = o.valid, o.correct
    return Quadrants(
        valid_right=int((v & c).sum()), valid_wrong=int((v & ~c).sum()),
        invalid_right=int((~v & c).sum()), invalid_wrong=int((~v & ~c).sum()),
    )


def arm_metrics(table: ScoredTable, cond: Condition) -> ArmMetrics:
    rows = table.column(cond)
    o = outcomes_of(rows)
    tokens = [r.completion_tokens for r in rows]
    return ArmMetrics(
        key=cond.key, condition=cond, n=len(rows),
        validity=_rate(o.valid), accuracy=_rate(o.correct),
        wrong_but_valid=_rate(o.wrong_but_valid),
        executable_accuracy=_rate(o.executable), parsed=_rate(o.parsed),
        quadrants=_quadrants(o), truncated=int(o.truncated.sum()), looped=int(o.looped.sum()),
        runaway=int(o.runaway.sum()),
        errors=int(o.errors.sum()),
        mean_completion_tokens=float(np.mean(tokens)) if tokens else 0.0,
        unenforced=dict(sorted(Counter(w for r in rows for w in r.unenforced).items())),
    )


def state_labels(o: Outcomes) -> list[str]:
    """'valid/right', 'invalid/wrong', 'n/a/right'... per item."""
    n = o.truncated.size
    valid = ["n/a"] * n if o.valid is None else ["valid" if v else "invalid" for v in o.valid]
    right = ["n/a"] * n if o.correct is None else ["right" if c else "wrong" for c in o.correct]
    return [f"{v}/{r}" for v, r in zip(valid, right)]


def _sample_states(rows: list[ScoredGeneration]) -> list[SampleState]:
    """Each row's ledger state, cut (budget or loop stop) and runaway marks."""
    o = outcomes_of(rows)
    return [SampleState(state=label, truncated=bool(truncated or looped), runaway=bool(ran_away))
            for label, truncated, looped, ran_away in zip(state_labels(o), o.truncated, o.looped, o.runaway,
                                                          strict=True)]


def ledger(table: ScoredTable) -> list[LedgerRow]:
    """One row per item: its state under every condition it has a
    generation in (a condition it lacks is left out of ``states``)."""
    states: dict[str, dict[str, str]] = {i: {} for i in table.item_ids}
    cut: dict[str, list[str]] = {i: [] for i in table.item_ids}
    runaway: dict[str, list[str]] = {i: [] for i in table.item_ids}
    for cond in table.conditions:
        rows = table.column(cond)
        for row, state in zip(rows, _sample_states(rows), strict=True):
            states[row.item_id][cond.key] = state.state
            if state.truncated:
                cut[row.item_id].append(cond.key)
            if state.runaway:
                runaway[row.item_id].append(cond.key)
    later = _later_sample_states(table)
    rounds = _earlier_rounds(table)
    return [LedgerRow(item_id=i, states=states[i], truncated=cut[i], runaway=runaway[i],
                      later_samples=later.get(i, {}), rounds=rounds.get(i, {})) for i in table.item_ids]


def _fed_back(row: ScoredGeneration) -> list[str]:
    """The errors a round was re-asked with, as the ledger shows them."""
    s = row.score
    if not s.parsed:
        return [f"parse: {(s.note or 'not parsed')[:120]}"]
    return [f"{v.keyword} at {v.instance_path or '(root)'}" for v in s.violations]


def _earlier_rounds(table: ScoredTable) -> dict[str, dict[str, list[RoundState]]]:
    """Item -> condition key -> the earlier rounds of its (sample 0) answer."""
    out: dict[str, dict[str, list[RoundState]]] = {}
    for row in table.rows:
        if row.earlier:
            labels = state_labels(outcomes_of(list(row.earlier)))
            out.setdefault(row.item_id, {})[row.condition.key] = [
                RoundState(state=label, errors=_fed_back(r)) for label, r in zip(labels, row.earlier, strict=True)]
    return out


def _later_sample_states(table: ScoredTable) -> dict[str, dict[str, list[SampleState]]]:
    """Item -> condition key -> its samples 1..K-1, in order."""
    out: dict[str, dict[str, list[SampleState]]] = {}
    later = sorted(table.extra_samples, key=lambda r: r.sample)
    for cond in table.conditions:
        rows = [r for r in later if r.condition == cond]
        if rows:
            for row, state in zip(rows, _sample_states(rows), strict=True):
                out.setdefault(row.item_id, {}).setdefault(cond.key, []).append(state)
    return out
