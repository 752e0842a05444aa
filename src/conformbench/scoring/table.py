"""The scored table: every generation of one (task, model) after scoring,
the one input of metrics, comparisons and report sections.

Excluded items are already dropped from every condition, so each condition
has exactly one row per item in ``item_ids`` (paired by construction).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from conformbench.records.items import Condition, Item, ItemScore

__all__ = ["ScoredGeneration", "ScoredTable"]


@dataclass(frozen=True)
class ScoredGeneration:
    """One generation and its score."""

    item: Item
    condition: Condition
    score: ItemScore
    finish_reason: str
    text: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0

    @property
    def item_id(self) -> str:
        return self.item.id


@dataclass(frozen=True)
class ScoredTable:
    """All scored generations of one task on one model."""

    task: str
    model: str
    #: items kept (exclusions removed), in run order
    item_ids: tuple[str, ...]
    #: conditions in run order
    conditions: tuple[Condition, ...]
    rows: tuple[ScoredGeneration, ...]
    _index: dict[tuple[str, str], ScoredGeneration] = field(
        default_factory=dict, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        for row in self.rows:
            self._index[(row.item_id, row.condition.key)] = row

    @property
    def n(self) -> int:
        return len(self.item_ids)

    def row(self, item_id: str, condition: Condition) -> ScoredGeneration:
        return self._index[(item_id, condition.key)]

    def column(self, condition: Condition) -> list[ScoredGeneration]:
        """The rows of one condition, aligned with ``item_ids``."""
        key = condition.key  # a property that formats strings: once, not per item
        return [self._index[(i, key)] for i in self.item_ids]

    def values(
        self, condition: Condition, get: Callable[[ScoredGeneration], Any]
    ) -> list[Any]:
        return [get(r) for r in self.column(condition)]

    def flags(
        self, condition: Condition, get: Callable[[ScoredGeneration], bool | None]
    ) -> npt.NDArray[np.bool_]:
        """A boolean vector over items (None counts as False)."""
        return np.array([bool(get(r)) for r in self.column(condition)], dtype=bool)
