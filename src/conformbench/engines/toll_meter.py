"""Measuring what a token mask takes from the model, step by step (the
record: ``records.mask_toll``). A decoder hands ``TollMeter.observe`` the
raw logits of a step (before any sampler, penalty or temperature) and the
grammar's allowed tokens; the meter keeps the allowed share of the softmax
at temperature 1 and whether the unconstrained top token was allowed.

Cost: one exp and two sums over the vocabulary per step in numpy (measured
in BENCHMARKS.md, "The mask's toll")."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from conformbench.records.mask_toll import MaskToll, MaskTrace, compact

__all__ = ["TollMeter", "allowed_share"]


def allowed_share(logits: npt.NDArray[np.floating], allowed: npt.NDArray[np.bool_]) -> tuple[float, bool]:
    """(sum of softmax(logits) over ``allowed``, whether argmax(logits) is
    allowed). Only the first ``len(allowed)`` logits are the vocabulary's
    tokens; logits past it (padding rows of some checkpoints) count in the
    softmax as the model gives them."""
    row = np.asarray(logits, dtype=np.float32)
    top = int(np.argmax(row))
    weights = np.exp(row - row[top])
    total = float(np.sum(weights, dtype=np.float64))
    n = min(len(allowed), len(row))
    kept = float(np.sum(weights[:n], where=allowed[:n], dtype=np.float64))
    share = min(1.0, kept / total) if total > 0 and np.isfinite(total) else 0.0
    return share, bool(top < n and allowed[top])


class TollMeter:
    """The toll of one generation's mask, step by step."""

    def __init__(self) -> None:
        self.shares: list[float] = []
        self.top_allowed: list[bool] = []
        #: the output index of the token each step chose
        self.tokens: list[int] = []

    def observe(self, logits: npt.NDArray[np.floating], allowed: npt.NDArray[np.bool_], position: int) -> None:
        share, top = allowed_share(logits, allowed)
        self.shares.append(share)
        self.top_allowed.append(top)
        self.tokens.append(position)

    @property
    def first_refused(self) -> int | None:
        """The first step whose top token was refused, or None."""
        return next((i for i, ok in enumerate(self.top_allowed) if not ok), None)

    def record(self, char_of: Callable[[int], int] | None = None, trace: bool = False) -> MaskToll | None:
        """The summary (None when no step was masked); ``char_of(token
        index)`` gives the character offset of an output token in the text."""
        if not self.shares:
            return None
        first = self.first_refused
        char = char_of(self.tokens[first]) if first is not None and char_of is not None else None
        return MaskToll(
            steps=len(self.shares), mean_share=compact(float(np.mean(self.shares))),
            min_share=compact(min(self.shares)), refused_top=self.top_allowed.count(False),
            first_refused_step=first, first_refused_char=char,
            trace=MaskTrace(shares=[compact(s) for s in self.shares], top_allowed=list(self.top_allowed),
                            tokens=list(self.tokens)) if trace else None)
