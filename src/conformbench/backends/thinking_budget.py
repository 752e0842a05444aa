"""The thinking's budget inside a decoder (think_then_constrain): a
``ThinkingMatcher`` wraps the matcher of a thinking grammar
(engines/thinking_grammar.py), counts the tokens written before the stop string,
and when they reach the budget allows only the stop string's tokens, one at
a time (the grammar accepts them: the free rule takes any text up to its
stop). The answer then follows under the grammar, in the same call, and
the matcher says the thinking was cut ("budget").

A thinking that falls into a degenerate loop would never reach its stop
string either: the matcher checks the thinking with the loop stop's rule
(backends/loops.py, on its cadence) and closes it there the same way
("loop"), so the answer still follows; the run turns the decoder's own loop
stop off for such a call, which would end it inside the thinking with no
answer.

Both local backends compile constraints through ``ConstraintCache``, which
wraps a thinking constraint's matcher here (``with_thinking``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import numpy.typing as npt

from conformbench.backends.loops import DEFAULT_LOOP_RULE, loop_period
from conformbench.engines.base import CompiledConstraint, DecodeHooks, Vocabulary
from conformbench.engines.masking import MaskProcessor, TokenMatcher, unpack_bitmask
from conformbench.errors import UnsupportedSchemaError
from conformbench.records.generation import ThinkCut, Thinking

__all__ = ["ThinkingMatcher", "with_thinking"]


def with_thinking(compiled: CompiledConstraint, thinking: Thinking, vocab: Vocabulary) -> CompiledConstraint:
    """``compiled`` (a thinking grammar) whose every generation's matcher is
    a ``ThinkingMatcher`` with ``thinking``'s budget."""
    stop_tokens = vocab.tokenize(thinking.stop)
    pieces = vocab.token_pieces
    stop_ids = frozenset({vocab.eos})
    inner = compiled.start

    def start(prompt_tokens: int) -> DecodeHooks:
        processor = inner(prompt_tokens).processor
        if processor is None:
            raise UnsupportedSchemaError(compiled.engine, "a thinking grammar needs a token-mask engine")
        matcher = ThinkingMatcher(processor.matcher, pieces, thinking.stop, stop_tokens, thinking.tokens)
        return DecodeHooks(processor=MaskProcessor(matcher, prompt_tokens, stop_ids))

    return replace(compiled, start=start)


class ThinkingMatcher(TokenMatcher):
    """A grammar matcher whose free text before ``stop`` is cut at
    ``budget`` tokens by forcing ``stop_tokens`` (see the module doc)."""

    #: it forces the stop string's tokens once the thinking is cut
    forces = True

    def __init__(self, inner: TokenMatcher, pieces: Sequence[bytes | None], stop: str, stop_tokens: Sequence[int],
                 budget: int) -> None:
        self._inner = inner
        self._pieces = pieces
        self._stop = stop.encode("utf-8")
        self._stop_tokens = tuple(stop_tokens)
        self._budget = budget
        #: tokens written before the stop string, and their bytes
        self.thought = 0
        self._text = b""
        self.closed = False
        #: the stop string's tokens still to force once the thinking is cut
        self._pending: list[int] = []
        #: why the decoder closed the thinking itself (None: it did not)
        self.think_cut: ThinkCut | None = None

    def advance(self, tokens: list[int]) -> None:
        for token in tokens:
            if self._pending and token == self._pending[0]:
                self._pending.pop(0)
            if not self.closed:
                self._think(token)
        self._inner.advance(tokens)

    def _think(self, token: int) -> None:
        """One more token of the thinking: closed at the stop string, cut at
        the budget or in a loop."""
        self.thought += 1
        piece = self._pieces[token] if 0 <= token < len(self._pieces) else None
        self._text += piece or b""
        if self._stop in self._text[-(len(piece or b"") + len(self._stop)):]:
            self.closed, self._pending = True, []
        elif self.think_cut is None and self.thought >= self._budget:
            self._cut("budget")
        elif (self.think_cut is None and self.thought % DEFAULT_LOOP_RULE.check_every == 0
              and loop_period(self._text.decode("utf-8", errors="replace"))):
            self._cut("loop")

    def _cut(self, why: ThinkCut) -> None:
        self.think_cut, self._pending = why, list(self._stop_tokens)

    def _forcing(self, allowed: npt.NDArray[np.bool_] | None = None) -> int | None:
        """The stop-string token to force now, if any (only one the grammar
        allows: a half-written character is finished first)."""
        if self.closed or not self._pending:
            return None
        token = self._pending[0]
        if allowed is not None and not (token < len(allowed) and allowed[token]):
            return None
        return token

    def fill_bitmask(self, bitmask: npt.NDArray[np.int32]) -> None:
        self._inner.fill_bitmask(bitmask)
        if self.closed or not self._pending:
            return
        token = self._forcing(unpack_bitmask(bitmask, bitmask.shape[1] * 32))
        if token is not None:
            bitmask.fill(0)
            bitmask[0, token // 32] = np.int32(np.uint32(1 << (token % 32)).view(np.int32))

    def forced(self) -> list[int]:
        if not self.closed and self._pending:
            n = self._inner_vocab_words()
            mask = np.zeros((1, n), dtype=np.int32)
            self._inner.fill_bitmask(mask)
            token = self._forcing(unpack_bitmask(mask, n * 32))
            return [] if token is None else [token]
        return self._inner.forced()

    def _inner_vocab_words(self) -> int:
        return (len(self._pieces) + 31) // 32

    def fork(self) -> ThinkingMatcher | None:
        inner = self._inner.fork()
        if inner is None:
            return None
        copy = ThinkingMatcher(inner, self._pieces, self._stop.decode("utf-8"), self._stop_tokens, self._budget)
        copy.thought, copy._text, copy.closed = self.thought, self._text, self.closed
        copy._pending, copy.think_cut = list(self._pending), self.think_cut
        return copy

