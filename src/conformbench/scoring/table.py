"""The scored table: every generation of one (task, model) after scoring,
the one input of metrics, comparisons and report sections.

Every item stays in every condition it has a row in. An item an engine could
not compile (or a generation missing from an unfinished run) leaves only that
condition: a condition's rates are over its own rows (``column``), and a
paired comparison is over the items both conditions have (``paired``), each
with its N stated. A prompt-only cell is never shrunk by a grammar's
refusals.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from conformbench.records.attention_record import AttentionRecord
from conformbench.records.items import Condition, Item, ItemScore
from conformbench.records.mask_toll import MaskToll
from conformbench.records.replay import StepCost
from conformbench.scoring.runaway import ends_in_runaway
from conformbench.validator.format_checks import FormatMode

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
    #: what the engine compiled but did not enforce for this generation
    unenforced: tuple[str, ...] = ()
    #: which of the run's samples of the item and condition (0: the first)
    sample: int = 0
    #: attention at the answer position (``--attention`` runs; None otherwise)
    attention: AttentionRecord | None = None
    #: a multi-round arm's answer: its round (0: the first) and the earlier
    #: rounds' answers, scored, in order
    round: int = 0
    earlier: tuple[ScoredGeneration, ...] = ()
    #: the free step the answer packaged (reason_then_constrain), and what
    #: it cost (None: not recorded, in replays made before it was)
    free_text: str | None = None
    step: StepCost | None = None
    #: the text was another arm's identical turn, generated once
    shared: bool = False
    #: think_then_constrain: the free text before the stop string (``text``
    #: is the answer after it), and whether the decoder closed it at its budget
    thinking: str | None = None
    think_cut: str | None = None
    #: what the token mask took from the model (None: not measured)
    mask_toll: MaskToll | None = None

    @property
    def rounds(self) -> tuple[ScoredGeneration, ...]:
        """Every round's answer, the first first (this one last)."""
        return (*self.earlier, self)

    @property
    def item_id(self) -> str:
        return self.item.id

    @cached_property
    def runaway(self) -> bool:
        """Cut at its budget inside a runaway number sequence (scoring/runaway.py);
        read from the text once, though metrics, ledger and comparisons all ask."""
        return self.finish_reason == "length" and ends_in_runaway(self.text)


@dataclass(frozen=True)
class ScoredTable:
    """All scored generations of one task on one model."""

    task: str
    model: str
    #: every item with at least one scored generation, in run order
    item_ids: tuple[str, ...]
    #: conditions in run order
    conditions: tuple[Condition, ...]
    rows: tuple[ScoredGeneration, ...]
    #: how ``format`` was read when the rows were scored (assert: checked;
    #: annotate: an annotation, JSON Schema 2020-12's default)
    format_mode: FormatMode = "annotate"
    #: the rows of samples 1, 2... of a run with ``[decoding] samples`` > 1;
    #: ``rows`` hold sample 0 alone, so every metric but the sampling
    #: section's (scoring/sample_metrics.py) is over the first sample
    extra_samples: tuple[ScoredGeneration, ...] = ()
    _index: dict[tuple[str, str], ScoredGeneration] = field(
        default_factory=dict, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        for row in self.rows:
            self._index[(row.item_id, row.condition.key)] = row

    @property
    def n(self) -> int:
        """Items in the table; a condition's own N is ``len(column(c))``."""
        return len(self.item_ids)

    def row(self, item_id: str, condition: Condition) -> ScoredGeneration:
        return self._index[(item_id, condition.key)]

    def has(self, item_id: str, condition: Condition) -> bool:
        return (item_id, condition.key) in self._index

    def column(self, condition: Condition) -> list[ScoredGeneration]:
        """The rows of one condition, in item order (items it lacks left out)."""
        key = condition.key  # a property that formats strings: once, not per item
        index = self._index
        return [index[(i, key)] for i in self.item_ids if (i, key) in index]

    def paired(
        self, a: Condition, b: Condition
    ) -> tuple[list[ScoredGeneration], list[ScoredGeneration]]:
        """Rows of ``a`` and ``b`` over the items both have, aligned."""
        ka, kb = a.key, b.key
        index = self._index
        both = [i for i in self.item_ids if (i, ka) in index and (i, kb) in index]
        return [index[(i, ka)] for i in both], [index[(i, kb)] for i in both]

    def values(
        self, condition: Condition, get: Callable[[ScoredGeneration], Any]
    ) -> list[Any]:
        return [get(r) for r in self.column(condition)]

    def flags(
        self, condition: Condition, get: Callable[[ScoredGeneration], bool | None]
    ) -> npt.NDArray[np.bool_]:
        """A boolean vector over items (None counts as False)."""
        return np.array([bool(get(r)) for r in self.column(condition)], dtype=bool)
