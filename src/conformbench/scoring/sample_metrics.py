"""Metrics over samples (``[decoding] samples`` = K > 1): K generations of
every item under every condition, with the item as the unit.

Per condition and metric (schema validity, accuracy), over the items that
have all K samples scored:

* the **mean over samples** (every sample of every item, each item weighing
  the same);
* **pass@k** and **all@k** for k = 1..K: the chance that at least one / all
  of k samples drawn without replacement from an item's K pass, averaged
  over items, each item by the unbiased estimator of Chen et al. 2021
  (``1 - C(K - c, k) / C(K, k)`` and ``C(c, k) / C(K, k)`` for c of K
  passing); pass@1 = all@1 = the mean;
* **per-item agreement**: the share of items whose K samples all give the
  same verdict, and the mean pairwise agreement (the chance that two of an
  item's samples agree);
* the **paired grammar comparison** over samples (each headline pair,
  ``prompt_only[S] -> constrained[S]``): the mean over items of the
  difference of the two per-item means.

The item is the unit of every interval (the samples of one item are not
independent draws, so an interval over samples would be too narrow): a
share is the mean of per-item shares with the Wilson interval over the N
items (``stats.item_share_interval``: every rate's interval, conservative
for fractional shares, never of zero width), a comparison the paired rule
of every comparison over the per-item means (``stats.paired_item_interval``:
the paired bootstrap over many items and discordant pairs, Newcombe's
interval otherwise)."""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
import numpy.typing as npt

from conformbench.records.base import FrozenRecord
from conformbench.records.items import Condition
from conformbench.scoring.intervals import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    item_share_interval,
    paired_item_interval,
)
from conformbench.scoring.paired import pairs
from conformbench.scoring.table import ScoredGeneration, ScoredTable

__all__ = [
    "SampledCondition",
    "SampledDelta",
    "SampledMetric",
    "SampledRate",
    "SamplingData",
    "all_at_k",
    "pass_at_k",
    "sample_count",
    "sampling_data",
]

#: the verdicts sampled metrics are over: name -> the score field read
METRICS = {"validity": "valid", "accuracy": "correct"}

FloatArray = npt.NDArray[np.float64]


class SampledRate(FrozenRecord):
    """A share over items, with its 95% interval over items (``item_share_interval``)."""

    rate: float
    ci95: tuple[float, float]


class SampledMetric(FrozenRecord):
    metric: str
    #: every sample of every item, items weighing the same
    mean: SampledRate
    #: pass@k and all@k for k = 1..K (index k - 1)
    pass_at: list[SampledRate]
    all_at: list[SampledRate]
    #: share of items whose K samples all give the same verdict
    agreement: SampledRate
    #: the chance that two samples of an item agree, averaged over items
    pairwise_agreement: float


class SampledCondition(FrozenRecord):
    key: str
    #: items with all K samples scored (the N of every number of the row)
    n: int
    metrics: list[SampledMetric]


class SampledDelta(FrozenRecord):
    """``to`` minus ``from`` over the items both have with K samples."""

    from_key: str
    to_key: str
    metric: str
    n: int
    delta: float
    ci95: tuple[float, float]
    #: how ci95 was made ("bootstrap" or "newcombe", ``stats.paired_item_interval``)
    method: str = "bootstrap"


class SamplingData(FrozenRecord):
    #: K: generations per item and condition
    samples: int
    conditions: list[SampledCondition]
    comparisons: list[SampledDelta]
    resamples: int = BOOTSTRAP_RESAMPLES
    seed: int = BOOTSTRAP_SEED


def sample_count(table: ScoredTable) -> int:
    """K: 1 + the highest sample index in the table (1: no sampling)."""
    return 1 + max((r.sample for r in table.extra_samples), default=0)


def pass_at_k(k: int, passed: npt.NDArray[np.int64], total: int) -> FloatArray:
    """Per item, the unbiased pass@k (Chen et al. 2021) of ``passed`` of ``total``."""
    denominator = math.comb(total, k)
    return np.array([1.0 - math.comb(total - int(c), k) / denominator for c in passed], dtype=np.float64)


def all_at_k(k: int, passed: npt.NDArray[np.int64], total: int) -> FloatArray:
    """Per item, the chance that all of k of its ``total`` samples pass."""
    denominator = math.comb(total, k)
    return np.array([math.comb(int(c), k) / denominator for c in passed], dtype=np.float64)


def _grid(table: ScoredTable, cond: Condition, k: int) -> dict[str, list[ScoredGeneration]]:
    """Item id -> its K samples in sample order, for the items that have all K."""
    key = cond.key
    by_item: dict[str, dict[int, ScoredGeneration]] = defaultdict(dict)
    for row in (*table.column(cond), *(r for r in table.extra_samples if r.condition.key == key)):
        by_item[row.item_id][row.sample] = row
    return {i: [by_item[i][s] for s in range(k)] for i in table.item_ids
            if all(s in by_item.get(i, {}) for s in range(k))}


def _verdicts(grid: dict[str, list[ScoredGeneration]], field: str) -> npt.NDArray[np.bool_] | None:
    """(items, K) booleans; None where the metric is n/a for every sample
    (None among defined values counts as a failure, as in every rate)."""
    values: list[list[bool | None]] = [[getattr(r.score, field) for r in rows] for rows in grid.values()]
    if all(v is None for row in values for v in row):
        return None
    return np.array([[v is True for v in row] for row in values], dtype=bool).reshape(len(values), -1)


def _intervals(stats: FloatArray) -> list[SampledRate]:
    """Each row of ``stats`` (per-item shares) as its mean with its
    interval over the items (``item_share_interval``)."""
    n = stats.shape[1]
    return [SampledRate(rate=float(row.mean()) if n else 0.0, ci95=item_share_interval(row)) for row in stats]


def _metric(name: str, verdicts: npt.NDArray[np.bool_]) -> SampledMetric:
    k = verdicts.shape[1]
    passed = verdicts.sum(axis=1).astype(np.int64)
    agree = ((passed == 0) | (passed == k)).astype(np.float64)
    rows = [verdicts.mean(axis=1), agree, *(pass_at_k(j, passed, k) for j in range(1, k + 1)),
            *(all_at_k(j, passed, k) for j in range(1, k + 1))]
    rated = _intervals(np.array(rows, dtype=np.float64).reshape(len(rows), -1))
    pairwise = (np.array([math.comb(int(c), 2) + math.comb(k - int(c), 2) for c in passed], dtype=np.float64)
                / math.comb(k, 2)) if k > 1 else np.ones(passed.size)
    return SampledMetric(metric=name, mean=rated[0], agreement=rated[1], pass_at=rated[2:2 + k],
                         all_at=rated[2 + k:], pairwise_agreement=float(pairwise.mean()) if passed.size else 0.0)


def _condition(table: ScoredTable, cond: Condition, k: int) -> SampledCondition:
    grid = _grid(table, cond, k)
    metrics = []
    for name, field in METRICS.items():
        verdicts = _verdicts(grid, field)
        if verdicts is not None:
            metrics.append(_metric(name, verdicts))
    return SampledCondition(key=cond.key, n=len(grid), metrics=metrics)


def _means(grid: dict[str, list[ScoredGeneration]], items: list[str], field: str) -> FloatArray | None:
    verdicts = _verdicts({i: grid[i] for i in items}, field)
    return None if verdicts is None else verdicts.mean(axis=1)


def _comparisons(table: ScoredTable, k: int) -> list[SampledDelta]:
    out: list[SampledDelta] = []
    for pair in pairs(table.conditions):
        if pair.role != "headline":
            continue
        before, after = _grid(table, pair.before, k), _grid(table, pair.after, k)
        both = [i for i in before if i in after]
        for name, field in METRICS.items():
            a, b = _means(before, both, field), _means(after, both, field)
            if a is None or b is None:
                continue
            ci95, method = paired_item_interval(a, b)
            out.append(SampledDelta(from_key=pair.before.key, to_key=pair.after.key, metric=name, n=len(both),
                                    delta=float((b - a).mean()) if both else 0.0, ci95=ci95, method=method))
    return out


def sampling_data(table: ScoredTable) -> SamplingData:
    """Every sampled metric of one task on one model (see the module doc)."""
    k = sample_count(table)
    return SamplingData(samples=k, conditions=[_condition(table, c, k) for c in table.conditions],
                        comparisons=_comparisons(table, k))
