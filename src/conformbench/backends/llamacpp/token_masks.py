"""The token masks of batched decoding: a grammar's allowed next tokens for
one sequence, and the masks of one step filled together (llguidance
matchers in one parallel call, ``fill_next_token_bitmask_par``; others one
by one)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import numpy.typing as npt

from conformbench.errors import BackendError

if TYPE_CHECKING:
    from conformbench.engines.masking import TokenMatcher

__all__ = ["LLGuidanceMask", "MaskFiller", "MatcherMask", "TokenMask"]

BoolArray = npt.NDArray[np.bool_]


class TokenMask(Protocol):
    """Restricts the next token of one sequence (a grammar). An
    implementation that subclasses it inherits ``llmatcher``'s None."""

    def allowed(self, n_vocab: int) -> BoolArray:
        """Boolean array of length n_vocab: True where the token may come next."""
        ...

    def consume(self, token: int) -> None:
        """Advance past the chosen token; BackendError if the grammar rejects
        it (the sequence then ends with finish_reason "error")."""
        ...

    def is_stopped(self) -> bool:
        """The grammar is complete and admits no further token."""
        ...

    @property
    def llmatcher(self) -> Any:
        """The llguidance matcher behind it, whose mask is filled with the
        others' in one parallel call; None for other engines."""
        return None


class LLGuidanceMask:
    """A TokenMask over an llguidance ``LLMatcher`` (one per sequence)."""

    def __init__(self, matcher: Any, tokenizer_vocab_size: int) -> None:
        import llguidance.numpy as llg_np

        self._matcher = matcher
        self._np = llg_np
        self._bitmask = llg_np.allocate_token_bitmask(1, tokenizer_vocab_size)
        self._vocab = tokenizer_vocab_size

    def allowed(self, n_vocab: int) -> BoolArray:
        self._np.fill_next_token_bitmask(self._matcher, self._bitmask, 0)
        bits = np.unpackbits(self._bitmask[0].view(np.uint8), bitorder="little")
        out = np.zeros(n_vocab, dtype=np.bool_)
        n = min(n_vocab, self._vocab)
        out[:n] = bits[:n].astype(np.bool_)
        return out

    def consume(self, token: int) -> None:
        if not self._matcher.consume_token(token):
            raise BackendError(f"llguidance rejected token {token}: {self._matcher.get_error()}")

    def is_stopped(self) -> bool:
        return bool(self._matcher.is_stopped())

    @property
    def llmatcher(self) -> Any:
        """The llguidance matcher (its masks are filled in parallel)."""
        return self._matcher


class MatcherMask:
    """A TokenMask over an engine's per-generation ``TokenMatcher`` (what
    its ``MaskProcessor`` drives in sequential decoding), so batched and
    sequential decoding apply the very same matcher. It never reports a
    stop of its own: as in sequential decoding, a complete grammar allows
    only end-of-generation tokens, and the model picks one."""

    def __init__(self, matcher: TokenMatcher, n_vocab: int) -> None:
        self._matcher = matcher
        self._bitmask = np.zeros((1, (n_vocab + 31) // 32), dtype=np.int32)

    def allowed(self, n_vocab: int) -> BoolArray:
        from conformbench.engines.masking import unpack_bitmask

        self._bitmask.fill(0)
        self._matcher.fill_bitmask(self._bitmask)
        return unpack_bitmask(self._bitmask, n_vocab)

    def consume(self, token: int) -> None:
        try:
            self._matcher.advance([token])
        except ValueError as exc:
            raise BackendError(f"the engine rejected token {token}: {exc}") from None

    def is_stopped(self) -> bool:
        return False

    @property
    def llmatcher(self) -> Any:
        """The llguidance matcher behind the engine's matcher, if it is one."""
        return self._matcher.llmatcher


def _llmatcher(mask: TokenMask | None) -> Any:
    return mask.llmatcher if mask is not None else None


class MaskFiller:
    """Fills the masks of one decode step; llguidance matchers together."""

    def __init__(self, max_sequences: int, n_vocab: int) -> None:
        self.n_vocab = n_vocab
        self._executor: Any = None  # llguidance's thread pool, made on first use
        self._bitmasks = np.zeros((max_sequences, (n_vocab + 31) // 32), dtype=np.int32)

    def fill(self, masks: list[TokenMask | None]) -> list[BoolArray | None]:
        """The allowed tokens of each sequence's next step (None: unconstrained)."""
        out: list[BoolArray | None] = [None] * len(masks)
        par = [(i, _llmatcher(m)) for i, m in enumerate(masks) if _llmatcher(m) is not None]
        for i, mask in enumerate(masks):
            if mask is not None and _llmatcher(mask) is None:
                out[i] = mask.allowed(self.n_vocab)
        if par:
            rows = self._fill_parallel([(matcher, row) for row, (_, matcher) in enumerate(par)])
            for row, (i, _) in enumerate(par):
                out[i] = rows[row]
        return out

    def _fill_parallel(self, matchers: list[tuple[Any, int]]) -> BoolArray:
        from llguidance import LLExecutor
        from llguidance.numpy import fill_next_token_bitmask_par

        if self._executor is None:
            self._executor = LLExecutor()
        bitmask = self._bitmasks[: len(matchers)]
        bitmask.fill(0)
        fill_next_token_bitmask_par(self._executor, matchers, bitmask)
        bits = np.unpackbits(bitmask.view(np.uint8), axis=1, bitorder="little")
        return bits[:, : self.n_vocab].astype(np.bool_)
