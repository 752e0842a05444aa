"""The paper's RQ2 trade-off (section 3.3): what a schema format saves in
context length against another, and what it costs in accuracy. The paper:
"representing schema in YAML on an average takes ~35% less tokens than JSON
... a drop of ~14% in Gen Acc and ~4% in Val Acc".

Here, per task and model, for the first (shots, arm) group of the run:
- schema length: the mean rendering length of each format over the items'
  schemas (tokenizer-free count, as in the token table), and the mean
  difference of the model's own prompt tokens between the two formats over
  the same (item, output format) pairs, which is the schema's length
  difference in the model's tokens;
- accuracy: the mean per-item difference (other minus base, averaged over
  the output formats both cells have), with the 95% paired interval every
  comparison uses (``intervals.paired_item_interval``: the paired bootstrap over
  many items and discordant pairs, Newcombe's interval otherwise).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

import numpy as np

from conformbench.records.base import FrozenRecord
from conformbench.records.items import Condition
from conformbench.scoring import intervals
from conformbench.scoring.concodeeval.metrics import rough_tokens
from conformbench.scoring.table import ScoredGeneration, ScoredTable

__all__ = ["Tradeoff", "tradeoff"]


class Tradeoff(FrozenRecord):
    base: str
    other: str
    shots: int
    arm: str
    #: mean schema rendering length (words and punctuation) of each format
    schema_tokens_base: float
    schema_tokens_other: float
    #: mean (other - base) of the model's prompt tokens over paired generations
    prompt_tokens_delta: float
    #: mean per-item accuracy of each format, and other - base with its interval
    acc_base: float
    acc_other: float
    delta: float
    ci95: tuple[float, float]
    #: items in the comparison
    n: int
    #: how ci95 was made ("bootstrap" or "newcombe", ``intervals.paired_item_interval``)
    method: str = "bootstrap"

    @property
    def token_saving(self) -> float:
        """1 - other/base: the share of schema length the other format saves."""
        return 1 - self.schema_tokens_other / self.schema_tokens_base if self.schema_tokens_base else 0.0


def _schema_lengths(table: ScoredTable, fmt: str) -> float:
    seen: dict[str, int] = {}
    for row in table.rows:
        renderings = row.item.input.get("renderings")
        if isinstance(renderings, dict) and fmt in renderings:
            seen[str(row.item.input.get("schema_id", row.item.id))] = rough_tokens(str(renderings[fmt]))
    return float(np.mean(list(seen.values()))) if seen else 0.0


def _pairs(table: ScoredTable, base: str, other: str, group: tuple[int, str]) -> list[tuple[Condition, Condition]]:
    by_key = {(c.text_axis("output_format"), c.count_axis("shots"), c.arm_key, c.text_axis("schema_format")): c
              for c in table.conditions}
    out = []
    for c in table.conditions:
        if (c.count_axis("shots"), c.arm_key) == group and c.text_axis("schema_format") == base:
            twin = by_key.get((c.text_axis("output_format"), c.count_axis("shots"), c.arm_key, other))
            if twin is not None:
                out.append((c, twin))
    return out


def tradeoff(table: ScoredTable, correct: Callable[[ScoredGeneration], bool],
             base: str = "json", other: str = "yaml") -> Tradeoff | None:
    """The trade-off of ``other`` against ``base`` (None when the run has
    no such pair of cells)."""
    if not table.conditions:
        return None
    first = table.conditions[0]
    group = (first.count_axis("shots"), first.arm_key)
    pairs = _pairs(table, base, other, group)
    diffs: dict[str, list[float]] = defaultdict(list)
    acc: dict[tuple[str, str], list[float]] = defaultdict(list)
    prompt_delta: list[int] = []
    for cond_base, cond_other in pairs:
        rows_b, rows_o = table.paired(cond_base, cond_other)
        for rb, ro in zip(rows_b, rows_o, strict=True):
            diffs[rb.item_id].append(float(correct(ro)) - float(correct(rb)))
            acc[(base, rb.item_id)].append(float(correct(rb)))
            acc[(other, rb.item_id)].append(float(correct(ro)))
            prompt_delta.append(ro.prompt_tokens - rb.prompt_tokens)
    if not diffs:
        return None
    per_item = np.array([[float(np.mean(v)) for v in diffs.values()]])
    base_share = np.array([float(np.mean(acc[(base, i)])) for i in diffs])
    other_share = np.array([float(np.mean(acc[(other, i)])) for i in diffs])
    (lo, hi), method = intervals.paired_item_interval(base_share, other_share)
    acc_base = float(np.mean([np.mean(v) for (fmt, _), v in acc.items() if fmt == base]))
    acc_other = float(np.mean([np.mean(v) for (fmt, _), v in acc.items() if fmt == other]))
    return Tradeoff(
        base=base, other=other, shots=group[0], arm=group[1],
        schema_tokens_base=_schema_lengths(table, base), schema_tokens_other=_schema_lengths(table, other),
        prompt_tokens_delta=float(np.mean(prompt_delta)), acc_base=acc_base, acc_other=acc_other,
        delta=float(per_item.mean()), ci95=(lo, hi), n=per_item.shape[1], method=method,
    )
