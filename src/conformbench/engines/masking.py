"""Token-mask constraints inside llama-cpp-python's sampler.

llama-cpp-python calls a logits processor with the tokens evaluated so far and
the logits of the next token. The processor feeds the tokens sampled since
its last call to a matcher, asks it for the bitmask of allowed next tokens
and sets every other logit to -inf. It also measures what the mask took
from the model at each step (``toll``: ``engines.toll_meter``).

An exception raised inside that callback is printed by ctypes as "Exception
ignored" and decoding carries on unconstrained, so the processor never
raises: it records the error, allows only end-of-generation tokens so the
generation stops, and the backend reports it as an error result.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import numpy.typing as npt

from conformbench.engines.toll_meter import TollMeter

if TYPE_CHECKING:
    from conformbench.records.generation import ThinkCut

__all__ = ["MaskProcessor", "TokenMatcher", "unpack_bitmask"]


class TokenMatcher(ABC):
    """One generation's state in a mask-based engine. An engine's matcher
    subclasses it and implements ``advance`` and ``fill_bitmask``; the
    capabilities below are declared here with the answer of a matcher that
    lacks them, and an engine that has one overrides it (llguidance's
    matcher overrides all three, a thinking budget's ``think_cut``)."""

    @abstractmethod
    def advance(self, tokens: list[int]) -> None:
        """Consume sampled tokens; raise ValueError if the engine rejects one."""

    @abstractmethod
    def fill_bitmask(self, bitmask: npt.NDArray[np.int32]) -> None:
        """Write allowed next tokens into a (1, ceil(n/32)) int32 bitmask:
        bit j of word i allows token 32*i + j."""

    #: ``forced`` says which tokens the grammar forces next (grammar
    #: fast-forward appends them without a sampling step each)
    forces: ClassVar[bool] = False

    def forced(self) -> list[int]:
        """The tokens the grammar forces from the current state on ([] when
        the next token is a choice, or the engine cannot tell: ``forces``)."""
        return []

    def fork(self) -> TokenMatcher | None:
        """An independent copy of this state (each beam of a beam search, or
        each prefix of a batch of them, carries its own); None: the engine
        cannot copy one, and the caller replays the tokens into a fresh one."""
        return None

    @property
    def llmatcher(self) -> Any:
        """The llguidance ``LLMatcher`` behind this state, whose masks
        batched decoding fills with many others' in one parallel call; None
        for other engines."""
        return None

    #: why the decoder closed a thinking itself (a thinking budget's
    #: matcher sets it: ``backends.thinking_budget``); None: it did not
    think_cut: ThinkCut | None = None


def unpack_bitmask(bitmask: npt.NDArray[np.int32], n: int) -> npt.NDArray[np.bool_]:
    """The first ``n`` bits of a one-row token bitmask as booleans."""
    bits = np.unpackbits(bitmask[0].view(np.uint8), bitorder="little")
    return bits[:n].astype(bool)


class MaskProcessor:
    """A logits processor for one generation (llama-cpp-python's
    ``LogitsProcessor`` signature: ``(input_ids, logits) -> logits``)."""

    def __init__(self, matcher: TokenMatcher, prompt_tokens: int, stop_ids: frozenset[int]) -> None:
        self._matcher = matcher
        self._prompt_tokens = prompt_tokens
        self._consumed = 0
        self._stop_ids = np.array(sorted(stop_ids), dtype=np.intp)
        self._bitmask: npt.NDArray[np.int32] | None = None
        #: why masking stopped working (the generation is then an error)
        self.error: str | None = None
        self.steps = 0
        #: what the mask took from the model at each step (``engines.toll_meter``)
        self.toll = TollMeter()

    @property
    def matcher(self) -> TokenMatcher:
        """The generation's matcher (batched decoding drives it directly)."""
        return self._matcher

    def __call__(
        self, input_ids: npt.NDArray[np.intc], logits: npt.NDArray[np.single]
    ) -> npt.NDArray[np.single]:
        if self.error is None:
            try:
                return self._mask(input_ids, logits)
            except Exception as exc:  # noqa: BLE001 - never let ctypes swallow it: see module doc
                self.error = f"{type(exc).__name__}: {exc}"
        return self._only_stop(logits)

    @property
    def can_force(self) -> bool:
        """The matcher tells forced tokens (``TokenMatcher.forces``)."""
        return self._matcher.forces

    def forced_after(self, input_ids: npt.NDArray[np.intc]) -> list[int]:
        """The tokens the grammar forces after ``input_ids`` (prompt and
        output so far), for fast-forward; [] once masking has failed."""
        if self.error is not None or not self.can_force:
            return []
        try:
            self._advance(input_ids[self._prompt_tokens + self._consumed :].tolist())
            return list(self._matcher.forced())
        except Exception as exc:  # noqa: BLE001 - recorded like a masking failure: see module doc
            self.error = f"{type(exc).__name__}: {exc}"
            return []

    def _advance(self, new: list[int]) -> None:
        if new:
            self._matcher.advance(new)
            self._consumed += len(new)

    def _mask(
        self, input_ids: npt.NDArray[np.intc], logits: npt.NDArray[np.single]
    ) -> npt.NDArray[np.single]:
        # The token sampled last is in input_ids from the next call on, so the
        # new tokens are those past the prompt and what was consumed already.
        self._advance(input_ids[self._prompt_tokens + self._consumed :].tolist())
        n = len(logits)
        if self._bitmask is None:
            self._bitmask = np.zeros((1, (n + 31) // 32), dtype=np.int32)
        self._bitmask.fill(0)
        self._matcher.fill_bitmask(self._bitmask)
        allowed = unpack_bitmask(self._bitmask, n)
        self.steps += 1
        if not allowed.any():
            raise ValueError("the engine allows no next token")
        # the logits as the model gave them: this processor runs first in
        # llama-cpp-python's sampler chain, before penalties and temperature
        self.toll.observe(logits, allowed, self._consumed)
        return np.where(allowed, logits, -np.inf).astype(np.single, copy=False)

    def _only_stop(self, logits: npt.NDArray[np.single]) -> npt.NDArray[np.single]:
        out = np.full(len(logits), -np.inf, dtype=np.single)
        ids = self._stop_ids[self._stop_ids < len(logits)]
        out[ids] = 0.0
        return out
