"""The numbers of the ConCodeEval attention section (the paper's Figure 2),
from the attention records a ``--attention`` run stores per generation
(``records.attention``: per layer the answer position's mass on the
schema's begin / middle / end, 30/40/30 of its model tokens, and on 10
equal slices of them).

Every share here is a share of the schema's attention (a layer's mass on a
part divided by its mass on the whole schema), averaged over the layers,
then over items; under attention proportional to tokens a part's share is
its share of the schema's tokens, given beside it.

- ``profiles``: per schema format (and shots, arm), the mean share of each
  of the 10 slices per layer, over the generations whose schema has at
  least 10 model tokens (a shorter one leaves slices empty; counted).
- ``segments``: per condition, the begin / middle / end shares over its
  items, with 95% percentile-bootstrap intervals over items from
  ``MEAN_INTERVAL_MIN_N`` items on (below, the interval of a mean is too
  narrow to be a 95% one: none is shown).
- ``keyword``: validation only. The stored profile does not say which
  tokens state the violated keyword, so what is computed is the attention
  on the segment (begin / middle / end) that holds it: the item's
  ``violated_positions`` bucket for the schema format, which is the middle
  of the keyword's text as a fraction of rough tokens (words and marks),
  read against the record's segments in model tokens (the two split points
  can differ by a token or two). Per 'no' item with one located violation:
  lift = the segment's share of the schema's attention / its share of the
  tokens. The items are split at the median lift of the condition; the
  share answered wrong (not 'no') in each half carries a Wilson interval.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from pydantic import Field

from conformbench.records.attention_record import PROFILE_BINS, AttentionRecord
from conformbench.records.base import FrozenRecord
from conformbench.scoring import intervals
from conformbench.scoring.concodeeval.metrics import Cell, Rate, rate_of
from conformbench.scoring.table import ScoredGeneration, ScoredTable

__all__ = [
    "MEAN_INTERVAL_MIN_N",
    "SEGMENTS",
    "AttentionData",
    "KeywordRow",
    "Mean",
    "Profile",
    "SegmentRow",
    "attention_data",
    "segment_shares",
    "token_shares",
]

SEGMENTS = ("begin", "middle", "end")
#: items from which a mean gets its percentile-bootstrap interval
MEAN_INTERVAL_MIN_N = 30

FloatArray = npt.NDArray[np.float64]


class Mean(FrozenRecord):
    """A mean over n items, with its 95% interval (None below MEAN_INTERVAL_MIN_N)."""

    n: int
    mean: float
    lo: float | None = None
    hi: float | None = None


class Profile(FrozenRecord):
    schema_format: str
    shots: int
    arm: str
    #: generations averaged, and the distinct items among them
    generations: int
    items: int
    #: generations left out: their schema has fewer model tokens than slices
    short: int
    #: per layer, the mean share of the schema's attention on each slice
    shares: list[list[float]]


class SegmentRow(FrozenRecord):
    where: Cell
    #: begin / middle / end share of the schema's attention
    shares: list[Mean]
    #: begin / middle / end share of the schema's tokens (mean over items)
    tokens: list[float]
    #: the schema's share of all the answer position's attention
    schema_attention: Mean
    layers: int


class KeywordRow(FrozenRecord):
    where: Cell
    #: 'no' items, and those with one violation located in a segment
    no_items: int
    located: int
    #: located items per segment of the violated keyword
    by_segment: dict[str, int]
    #: the median lift the items are split at
    median_lift: float
    #: wrong verdicts below the median lift and at or above it
    low: Rate
    high: Rate
    #: mean lift of the items answered wrong and of those answered 'no'
    lift_wrong: Mean
    lift_right: Mean


class AttentionData(FrozenRecord):
    task: str
    profiles: list[Profile]
    segments: list[SegmentRow]
    keyword: list[KeywordRow] = Field(default_factory=list)
    #: generations of the table without an attention record
    without: int = 0


def token_shares(record: AttentionRecord) -> FloatArray:
    """Begin / middle / end share of the schema's tokens, split as the
    record's masses are (backends/llamacpp/attention.py: mass_split)."""
    n = record.schema_tokens[1] - record.schema_tokens[0]
    frac = np.arange(n) / max(n, 1)
    counts = [(frac < 0.3).sum(), ((frac >= 0.3) & (frac < 0.7)).sum(), (frac >= 0.7).sum()]
    return np.array(counts, dtype=np.float64) / max(n, 1)


def _layer_shares(parts: Sequence[Sequence[float]], schema: Sequence[float]) -> FloatArray:
    """Each layer's parts divided by its schema mass, averaged over the
    layers that put any mass on the schema."""
    grid, whole = np.asarray(parts, dtype=np.float64), np.asarray(schema, dtype=np.float64)
    keep = whole > 0
    if not keep.any():
        return np.zeros(grid.shape[1] if grid.ndim == 2 else 0)
    return np.asarray((grid[keep] / whole[keep, None]).mean(axis=0), dtype=np.float64)


def segment_shares(record: AttentionRecord) -> FloatArray:
    """Begin / middle / end share of the schema's attention, mean over layers."""
    return _layer_shares(record.bme, record.schema_share)


def _mean(values: Sequence[float]) -> Mean:
    n = len(values)
    if n == 0:
        return Mean(n=0, mean=0.0)
    arr = np.asarray(values, dtype=np.float64)
    if n < MEAN_INTERVAL_MIN_N:
        return Mean(n=n, mean=float(arr.mean()))
    lo, hi = intervals.paired_bootstrap(arr.reshape(1, n), intervals.resample_weights(n))[0]
    return Mean(n=n, mean=float(arr.mean()), lo=float(lo), hi=float(hi))


def _where(row: ScoredGeneration) -> Cell:
    c = row.condition
    return Cell(schema_format=c.text_axis("schema_format") or "", output_format=c.text_axis("output_format") or "",
                shots=c.count_axis("shots"),
                arm=c.arm_key, key=c.key)


def _profiles(rows: Sequence[ScoredGeneration]) -> list[Profile]:
    groups: dict[tuple[str, int, str], list[ScoredGeneration]] = defaultdict(list)
    for r in rows:
        cond = r.condition
        groups[(cond.text_axis("schema_format") or "", cond.count_axis("shots"), cond.arm_key)].append(r)
    out = []
    for (fmt, shots, arm), members in groups.items():
        long = [r for r in members if r.attention is not None
                and r.attention.schema_tokens[1] - r.attention.schema_tokens[0] >= PROFILE_BINS]
        if not long:
            continue
        per = [np.array([_row_share(layer, whole) for layer, whole in
                         zip(r.attention.profile, r.attention.schema_share, strict=True)])
               for r in long if r.attention is not None]
        shares = np.mean(per, axis=0)
        out.append(Profile(schema_format=fmt, shots=shots, arm=arm, generations=len(long),
                           items=len({r.item_id for r in long}), short=len(members) - len(long),
                           shares=[[round(float(x), 6) for x in layer] for layer in shares]))
    return out


def _row_share(bins: Sequence[float], whole: float) -> list[float]:
    return [b / whole if whole > 0 else 0.0 for b in bins]


def _segment_row(rows: Sequence[ScoredGeneration]) -> SegmentRow:
    records = [r.attention for r in rows if r.attention is not None]
    shares = np.array([segment_shares(a) for a in records])
    tokens = np.array([token_shares(a) for a in records])
    schema = [float(np.mean(a.schema_share)) for a in records]
    return SegmentRow(where=_where(rows[0]), shares=[_mean(list(shares[:, i])) for i in range(3)],
                      tokens=[float(x) for x in tokens.mean(axis=0)], schema_attention=_mean(schema),
                      layers=max(a.layers for a in records))


def _segment_of(row: ScoredGeneration) -> str | None:
    positions = row.item.meta.get("violated_positions")
    fmt = row.condition.text_axis("schema_format")
    found = positions.get(fmt) if isinstance(positions, dict) and fmt is not None else None
    return str(found) if found in SEGMENTS else None


def _keyword_row(rows: Sequence[ScoredGeneration]) -> KeywordRow | None:
    no = [r for r in rows if r.score.label == "no" and r.attention is not None]
    located: list[tuple[str, float, bool]] = []
    for r in no:
        seg = _segment_of(r)
        if seg is None or r.attention is None:
            continue
        i = SEGMENTS.index(seg)
        share, tokens = segment_shares(r.attention)[i], token_shares(r.attention)[i]
        if tokens > 0:
            located.append((seg, float(share / tokens), not r.score.correct))
    if not located:
        return None
    lifts = np.array([lift for _, lift, _ in located])
    median = float(np.median(lifts))
    wrong = np.array([w for _, _, w in located])
    low, high = lifts < median, lifts >= median
    counts = {s: sum(seg == s for seg, _, _ in located) for s in SEGMENTS}
    return KeywordRow(where=_where(rows[0]), no_items=len(no), located=len(located), by_segment=counts,
                      median_lift=median,
                      low=rate_of(int(wrong[low].sum()), int(low.sum())),
                      high=rate_of(int(wrong[high].sum()), int(high.sum())),
                      lift_wrong=_mean(list(lifts[wrong])), lift_right=_mean(list(lifts[~wrong])))


def attention_data(table: ScoredTable) -> AttentionData | None:
    """The section's numbers; None when no generation has an attention record."""
    with_att = [r for r in table.rows if r.attention is not None]
    if not with_att:
        return None
    segments: list[SegmentRow] = []
    keyword: list[KeywordRow] = []
    for cond in table.conditions:
        rows = [r for r in table.column(cond) if r.attention is not None]
        if not rows:
            continue
        segments.append(_segment_row(rows))
        found = _keyword_row(table.column(cond)) if table.task == "validation" else None
        if found is not None:
            keyword.append(found)
    return AttentionData(task=table.task, profiles=_profiles(with_att), segments=segments, keyword=keyword,
                         without=len(table.rows) - len(with_att))
