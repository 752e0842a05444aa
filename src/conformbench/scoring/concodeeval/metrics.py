"""ConCodeEval grid metrics: pure functions over a ScoredTable (one task on
one model) giving JSON-able pydantic data.

Per 5 x 3 cell (and per shots and arm): Gen Acc, IS%, RTV% and Val Acc with
Wilson 95% intervals (``intervals.item_share_interval``, the interval of every
rate in every report); macro-F1, not a share of items, with a
percentile-bootstrap 95% interval (2,000 resamples, seed 42, vectorised)
from ``intervals.MEAN_BOOTSTRAP_MIN_N`` items on, none below (a bootstrap over a
handful of items collapses to a point). Constraint efficacy: violation counts
per keyword (paper Table 3) and per begin/middle/end position (Figure 1).
Format efficacy: schema tokens per format (Table 5). Every rate is over all
N items of the cell.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

import numpy as np
import numpy.typing as npt

from conformbench.records.base import FrozenRecord
from conformbench.records.items import Condition
from conformbench.schemas.dataset_stats import TokenStats
from conformbench.scoring import intervals
from conformbench.scoring.table import ScoredGeneration, ScoredTable

__all__ = [
    "Cell",
    "Count",
    "GenCell",
    "Interval",
    "Miss",
    "Rate",
    "TokenStats",
    "ValCell",
    "bootstrap_acc_f1",
    "gate_metrics",
    "gen_cells",
    "keyword_counts",
    "macro_f1",
    "miss_by_violation",
    "position_counts",
    "rate_of",
    "rough_tokens",
    "table_token_stats",
    "val_cells",
]

LABELS = ("yes", "no")


_Model = FrozenRecord


class Rate(_Model):
    """k of n with a 95% interval."""

    k: int
    n: int
    rate: float
    lo: float
    hi: float


class Interval(_Model):
    value: float
    #: None: too few items for an honest interval (macro-F1 below 30 items)
    lo: float | None
    hi: float | None


class Cell(_Model):
    """Where in the grid: formats, shots, arm (Condition.arm_key)."""

    schema_format: str
    output_format: str
    shots: int
    arm: str
    #: the Condition.key of the cell's condition
    key: str

    @property
    def cell(self) -> str:
        return f"{self.schema_format}->{self.output_format}"


class GenCell(_Model):
    where: Cell
    n: int
    gen_acc: Rate
    #: invalid samples: not parseable in the requested output format
    is_rate: Rate
    #: root data type violations
    rtv_rate: Rate
    #: answers that hit the token budget, and those the loop stop ended
    truncated: int
    looped: int = 0


class ValCell(_Model):
    where: Cell
    n: int
    val_acc: Interval
    val_f1: Interval
    #: answers that were neither yes nor no (counted wrong)
    unparseable: int
    truncated: int
    looped: int = 0
    #: counts of predicted yes / no
    predicted_yes: int
    predicted_no: int


class Count(_Model):
    """A count under one label (a keyword or a position bucket)."""

    where: Cell
    label: str
    count: int


class Miss(_Model):
    """Validation: 'no' items with one violated keyword/position label,
    and how many of them the model missed (answered yes or unparseable)."""

    where: Cell
    label: str
    missed: int
    total: int


def rate_of(k: int, n: int) -> Rate:
    """k of n with the Wilson score 95% interval (n = 0: all zeros)."""
    lo, hi = intervals.wilson(k, n)
    return Rate(k=k, n=n, rate=k / n if n else 0.0, lo=lo, hi=hi)


def _encode(values: Sequence[str | None]) -> npt.NDArray[np.int8]:
    # yes -> 0, no -> 1, anything else (unparseable) -> -1: never a hit, never a false positive
    table = {label: n for n, label in enumerate(LABELS)}
    return np.array([table.get(v, -1) if v is not None else -1 for v in values], dtype=np.int8)


def _f1_rows(y: npt.NDArray[np.int8], p: npt.NDArray[np.int8]) -> npt.NDArray[np.float64]:
    """Macro-F1 over the classes yes/no for each row of y/p (2-D arrays).
    A class with no true and no predicted items scores 0 (sklearn's
    zero_division=0 with labels=[yes, no])."""
    scores = []
    for c in range(len(LABELS)):
        tp = ((y == c) & (p == c)).sum(axis=-1)
        fp = ((y != c) & (p == c)).sum(axis=-1)
        fn = ((y == c) & (p != c)).sum(axis=-1)
        denom = 2 * tp + fp + fn
        scores.append(np.where(denom > 0, 2 * tp / np.maximum(denom, 1), 0.0))
    return np.asarray(np.mean(scores, axis=0), dtype=np.float64)


def macro_f1(labels: Sequence[str | None], predictions: Sequence[str | None]) -> float:
    """Macro-F1 over yes/no; an unparseable prediction (None or other) is a
    miss for its true class and a false positive for none."""
    y, p = _encode(labels), _encode(predictions)
    return float(_f1_rows(y[None, :], p[None, :])[0])


def bootstrap_acc_f1(
    labels: Sequence[str | None],
    predictions: Sequence[str | None],
    resamples: int = intervals.BOOTSTRAP_RESAMPLES,
    seed: int = intervals.BOOTSTRAP_SEED,
) -> tuple[Interval, Interval]:
    """Accuracy with its Wilson 95% interval (``intervals.item_share_interval``)
    and macro-F1 with a percentile-bootstrap 95% interval from
    ``intervals.MEAN_BOOTSTRAP_MIN_N`` items (none below)."""
    y, p = _encode(labels), _encode(predictions)
    n = len(y)
    if n == 0:
        return Interval(value=0.0, lo=0.0, hi=0.0), Interval(value=0.0, lo=None, hi=None)
    hits = (y == p) & (y >= 0)
    lo, hi = intervals.item_share_interval(hits.astype(np.float64))
    acc = Interval(value=float(hits.mean()), lo=lo, hi=hi)
    f1 = Interval(value=macro_f1(labels, predictions), lo=None, hi=None)
    if n >= intervals.MEAN_BOOTSTRAP_MIN_N:
        idx = intervals.resample_indices(n, resamples, seed)
        f1s = _f1_rows(y[idx], p[idx])
        f1 = f1.model_copy(update={"lo": float(np.percentile(f1s, 2.5)), "hi": float(np.percentile(f1s, 97.5))})
    return acc, f1


def _where(cond: Condition) -> Cell:
    return Cell(
        schema_format=cond.text_axis("schema_format") or "",
        output_format=cond.text_axis("output_format") or "",
        shots=cond.count_axis("shots"),
        arm=cond.arm_key,
        key=cond.key,
    )


def gen_cells(table: ScoredTable) -> list[GenCell]:
    """Gen Acc / IS / RTV per condition, in run order."""
    out = []
    for cond in table.conditions:
        rows = table.column(cond)
        n = len(rows)
        out.append(GenCell(
            where=_where(cond), n=n,
            gen_acc=rate_of(sum(bool(r.score.correct) for r in rows), n),
            is_rate=rate_of(sum(not r.score.parsed for r in rows), n),
            rtv_rate=rate_of(sum(r.score.root_type_ok is False for r in rows), n),
            truncated=sum(r.finish_reason == "length" for r in rows),
            looped=sum(r.finish_reason == "loop" for r in rows),
        ))
    return out


def val_cells(table: ScoredTable) -> list[ValCell]:
    """Val Acc / macro-F1 per condition, in run order."""
    out = []
    for cond in table.conditions:
        rows = table.column(cond)
        labels = [r.score.label for r in rows]
        preds = [r.score.prediction for r in rows]
        acc, f1 = bootstrap_acc_f1(labels, preds)
        out.append(ValCell(
            where=_where(cond), n=len(rows), val_acc=acc, val_f1=f1,
            unparseable=sum(p not in LABELS for p in preds),
            truncated=sum(r.finish_reason == "length" for r in rows),
            looped=sum(r.finish_reason == "loop" for r in rows),
            predicted_yes=preds.count("yes"), predicted_no=preds.count("no"),
        ))
    return out


def _counts(table: ScoredTable, get: Callable[[ScoredGeneration], Iterable[str]]) -> list[Count]:
    out = []
    for cond in table.conditions:
        counter: Counter[str] = Counter()
        for row in table.column(cond):
            counter.update(get(row))
        for label, count in sorted(counter.items(), key=lambda kv: (-kv[1], kv[0])):
            out.append(Count(where=_where(cond), label=label, count=count))
    return out


def keyword_counts(table: ScoredTable) -> list[Count]:
    """Violations per keyword per condition (paper Table 3: one count per
    violation, so a sample breaking maxLength twice counts twice)."""
    return _counts(table, lambda r: (v.keyword for v in r.score.violations))


def position_counts(table: ScoredTable) -> list[Count]:
    """Violations per position bucket (begin/middle/end of the rendered
    schema; 'unknown' where the position could not be placed)."""
    return _counts(table, lambda r: (v.position or "unknown" for v in r.score.violations))


def _violated(row: ScoredGeneration, by: str) -> str:
    meta = row.item.meta
    if by == "keyword":
        return str(meta.get("violated_keyword") or "unknown")
    positions = meta.get("violated_positions")
    fmt = row.condition.text_axis("schema_format")
    found = positions.get(fmt) if isinstance(positions, dict) and fmt is not None else None
    return str(found or "unknown")


def miss_by_violation(table: ScoredTable, by: str) -> list[Miss]:
    """Validation, 'no' items only: how many were answered wrong, per
    violated keyword (by='keyword') or per position of the violated keyword
    in the rendering the model saw (by='position')."""
    if by not in ("keyword", "position"):
        raise ValueError(f"by must be keyword or position, not {by!r}")
    out = []
    for cond in table.conditions:
        total: Counter[str] = Counter()
        missed: Counter[str] = Counter()
        for row in table.column(cond):
            if row.score.label != "no":
                continue
            name = _violated(row, by)
            total[name] += 1
            missed[name] += not row.score.correct
        for name in sorted(total):
            out.append(Miss(where=_where(cond), label=name, missed=missed[name],
                            total=total[name]))
    return out


_ROUGH = re.compile(r"\w+|[^\w\s]", re.UNICODE)


def rough_tokens(text: str) -> int:
    """A tokenizer-free token count: words and single punctuation marks."""
    return len(_ROUGH.findall(text))


def table_token_stats(table: ScoredTable, tokenizer: Callable[[str], int] = rough_tokens) -> list[TokenStats]:
    """Max and mean schema tokens per schema format over the distinct
    schemas of the table's items (paper Table 5)."""
    texts: dict[str, dict[str, str]] = {}
    for row in table.rows:
        renderings = row.item.input.get("renderings")
        schema_id = str(row.item.input.get("schema_id", row.item.id))
        if isinstance(renderings, dict):
            for fmt, text in renderings.items():
                texts.setdefault(str(fmt), {})[schema_id] = str(text)
    out = []
    for fmt, by_schema in texts.items():
        counts = [tokenizer(t) for t in by_schema.values()]
        out.append(TokenStats(schema_format=fmt, schemas=len(counts), max_tokens=max(counts),
                              mean_tokens=float(np.mean(counts))))
    return out


def gate_metrics(cells: Sequence[Cell], values: Sequence[dict[str, float]]) -> dict[str, float]:
    """'metric[json->json/0shot/prompt_only[schema]]' for every cell, plus
    the short 'metric[json->json]' for the first condition of each format
    cell in run order (zero-shot and the first arm when those were run)."""
    out: dict[str, float] = {}
    seen: set[str] = set()
    for cell, metrics in zip(cells, values, strict=True):
        for metric, value in metrics.items():
            out[f"{metric}[{cell.key}]"] = value
            if cell.cell not in seen:
                out[f"{metric}[{cell.cell}]"] = value
        seen.add(cell.cell)
    return out
