"""outlines-core: the JSON Schema becomes one regular expression, the regex an
index from automaton states to allowed tokens over the model's vocabulary.

Only outlines-core is needed (outlines 1.x itself is not). Regexes cannot
express numeric bounds, so those are dropped silently. Index builds can take
minutes (long string bounds, big unions) and cannot be interrupted in
process, so they run in a child process that is killed after
``INDEX_TIMEOUT_S``; the schema is then refused with that reason.
"""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from typing import Any

import numpy as np
import numpy.typing as npt

from conformbench.engines.base import (
    Acceptor,
    DecodeHooks,
    Engine,
    Vocabulary,
    Walk,
    engines,
    seconds_of,
    time_masks,
)
from conformbench.engines.masking import MaskProcessor, TokenMatcher
from conformbench.jsontypes import Schema

__all__ = ["INDEX_TIMEOUT_S", "OutlinesEngine"]

INDEX_TIMEOUT_S = 60.0


class _Matcher(TokenMatcher):
    def __init__(self, guide: Any) -> None:
        self._guide = guide

    def advance(self, tokens: list[int]) -> None:
        for tok in tokens:
            self._guide.advance(tok, return_tokens=False)

    def fill_bitmask(self, bitmask: npt.NDArray[np.int32]) -> None:
        self._guide.write_mask_into(bitmask.ctypes.data, bitmask.size, bitmask.itemsize)


class _Acceptor:
    """Walks tokens through the index's state transitions."""

    def __init__(self, index: Any, n_vocab: int) -> None:
        self._index = index
        self._n_vocab = n_vocab

    def walk(self, tokens: Sequence[int]) -> Walk:
        state = self._index.get_initial_state()
        for i, token in enumerate(tokens):
            state = self._index.get_next_state(state, token)
            if state is None:
                return Walk(accepted=False, consumed=i)
        return Walk(accepted=bool(self._index.is_final_state(state)), consumed=len(tokens))

    def mask_seconds(self, tokens: Sequence[int], positions: Sequence[int]) -> list[float]:
        from outlines_core import Guide

        guide = Guide(self._index)
        state = self._index.get_initial_state()
        bitmask = np.zeros((1, (self._n_vocab + 31) // 32), dtype=np.int32)

        def advance(token: int) -> bool:
            nonlocal state
            state = self._index.get_next_state(state, token)
            if state is None:
                return False
            guide.advance(token, return_tokens=False)
            return True

        return time_masks(
            tokens, positions,
            lambda: seconds_of(lambda: guide.write_mask_into(bitmask.ctypes.data, bitmask.size, bitmask.itemsize)),
            advance,
        )

    def close(self) -> None:
        pass


def _vocabulary(vocab: Vocabulary) -> Any:
    """outlines-core's Vocabulary: bytes -> token ids, without EOS and control
    tokens (the Index adds EOS where the regex may end)."""
    from outlines_core import Vocabulary

    pieces: dict[bytes, list[int]] = {}
    for tok, piece in enumerate(vocab.token_pieces):
        if piece and tok != vocab.eos:
            pieces.setdefault(piece, []).append(tok)
    return Vocabulary(vocab.eos, pieces)


def _serve_indexes(conn: Connection, vocabulary: Any) -> None:
    """Child process: build an Index per regex received, until None or until
    the parent goes (its end of the pipe closes: the child ends quietly, not
    with a traceback). Ctrl-C and SIGTERM are the parent's to handle: it
    stops the child itself."""
    from outlines_core import Index

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        while (regex := conn.recv()) is not None:
            try:
                conn.send((True, Index(regex, vocabulary)))
            except Exception as exc:  # noqa: BLE001 - the build's own refusal, sent back as text
                conn.send((False, f"{type(exc).__name__}: {exc}"))
    except (EOFError, BrokenPipeError, ConnectionResetError):
        return


class _IndexBuilder:
    """A child process holding the vocabulary; restarted after a timeout."""

    def __init__(self, vocabulary: Any) -> None:
        self._vocabulary = vocabulary
        self._proc: Any = None
        self._conn: Connection | None = None

    def build(self, regex: str, timeout_s: float) -> Any:
        """The Index; ValueError with the reason if it cannot be built."""
        if self._conn is None or not self._proc.is_alive():
            context = multiprocessing.get_context("spawn")
            self._conn, child = context.Pipe()
            self._proc = context.Process(target=_serve_indexes, args=(child, self._vocabulary), daemon=True)
            self._proc.start()
            child.close()
        self._conn.send(regex)
        if not self._conn.poll(timeout_s):
            self.close()
            raise ValueError(f"the index build ran past {timeout_s:.0f} s and was stopped")
        try:
            ok, payload = self._conn.recv()
        except EOFError:  # the child died (out of memory...)
            self.close()
            raise ValueError("the index build process died") from None
        if not ok:
            raise ValueError(payload)
        return payload

    def close(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.join()
        if self._conn is not None:
            self._conn.close()
        self._proc = self._conn = None


@engines.register("outlines")
class OutlinesEngine(Engine):
    distribution = "outlines-core"
    module = "outlines_core"

    def _index(self, text: str, vocab: Vocabulary, timeout_s: float) -> tuple[str, Any]:
        """(regex, index) for the schema text."""
        from outlines_core.json_schema import build_regex_from_schema

        builder = vocab.memo("outlines.builder", lambda: _IndexBuilder(_vocabulary(vocab)))
        try:
            regex = build_regex_from_schema(text)
            return regex, builder.build(regex, timeout_s)
        except (ValueError, TypeError) as exc:
            raise self.unsupported(exc) from None

    def _acceptor(self, schema: Schema, text: str, vocab: Vocabulary, timeout_s: float | None) -> Acceptor:
        _regex, index = self._index(text, vocab, INDEX_TIMEOUT_S if timeout_s is None else timeout_s)
        return _Acceptor(index, vocab.n_vocab)

    def _build(
        self, schema: Schema, text: str, vocab: Vocabulary
    ) -> tuple[str, Callable[[int], DecodeHooks]]:
        from outlines_core import Guide

        regex, index = self._index(text, vocab, INDEX_TIMEOUT_S)
        stop_ids = frozenset({vocab.eos})

        def start(prompt_tokens: int) -> DecodeHooks:
            return DecodeHooks(
                processor=MaskProcessor(_Matcher(Guide(index)), prompt_tokens, stop_ids)
            )

        return regex, start
