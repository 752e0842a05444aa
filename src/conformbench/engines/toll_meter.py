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

    def answer_from(self, char_of: Callable[[int], int], start: int) -> int:
        """The first step of the answer that begins at character ``start``
        of the output (think_then_constrain: just after the stop string):
        the first whose token ends past ``start`` (a token that straddles
        the stop string carries answer text, so its step is the answer's)
        or begins at it (the end token after the answer). Binary search over
        the steps: O(log steps) detokenizations."""
        lo, hi = 0, len(self.tokens)
        while lo < hi:
            mid = (lo + hi) // 2
            token = self.tokens[mid]
            if char_of(token + 1) > start or char_of(token) >= start:
                hi = mid
            else:
                lo = mid + 1
        return lo

    def record(self, char_of: Callable[[int], int] | None = None, trace: bool = False,
               answer_start: int | None = None) -> MaskToll | None:
        """The summary (None when no step was masked); ``char_of(token
        index)`` gives the character offset of an output token in the text.
        With ``answer_start`` (the character where think_then_constrain's
        answer begins in the output) the summary holds beside it the same
        figures over the answer's steps alone (``MaskToll.answer``)."""
        whole = self._summary(0, char_of, trace)
        if whole is None or answer_start is None or char_of is None:
            return whole
        answer = self._summary(self.answer_from(char_of, answer_start), char_of, False)
        return whole.model_copy(update={"answer": answer}) if answer is not None else whole

    def _summary(self, first_step: int, char_of: Callable[[int], int] | None, trace: bool) -> MaskToll | None:
        """The figures over the steps from ``first_step`` on (a refusal's
        step counted from there, its character in the whole output)."""
        shares, tops = self.shares[first_step:], self.top_allowed[first_step:]
        if not shares:
            return None
        first = next((i for i, ok in enumerate(tops) if not ok), None)
        char = char_of(self.tokens[first_step + first]) if first is not None and char_of is not None else None
        return MaskToll(
            steps=len(shares), mean_share=compact(float(np.mean(shares))),
            min_share=compact(min(shares)), refused_top=tops.count(False),
            first_refused_step=first, first_refused_char=char,
            trace=MaskTrace(shares=[compact(s) for s in shares], top_allowed=list(tops),
                            tokens=self.tokens[first_step:]) if trace else None)
