"""xgrammar (optional extra: it pulls in torch, transformers and triton).

xgrammar has no llama.cpp bridge, so its TokenizerInfo is built from the raw
byte pieces of the llama.cpp vocabulary (VocabType.RAW). It ignores several
keywords silently (uniqueItems, contains, multipleOf on numbers...); the
keyword probe reports which.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
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

__all__ = ["XgrammarEngine"]


class _Matcher(TokenMatcher):
    def __init__(self, matcher: Any) -> None:
        self._m = matcher

    def advance(self, tokens: list[int]) -> None:
        for tok in tokens:
            if not self._m.accept_token(tok):
                raise ValueError(f"xgrammar rejected token {tok}")

    def fill_bitmask(self, bitmask: npt.NDArray[np.int32]) -> None:
        # xgrammar writes into any CPU array with DLPack, numpy's included
        self._m.fill_next_token_bitmask(bitmask)


class _Acceptor:
    """Walks tokens through a fresh GrammarMatcher per call."""

    def __init__(self, compiled: Any, vocab: Vocabulary) -> None:
        self._compiled = compiled
        self._eos = vocab.eos
        self._n_vocab = vocab.n_vocab

    def walk(self, tokens: Sequence[int]) -> Walk:
        import xgrammar

        matcher = xgrammar.GrammarMatcher(self._compiled)
        for i, token in enumerate(tokens):
            if not matcher.accept_token(token):
                return Walk(accepted=False, consumed=i)
        # the stop token is accepted exactly where the grammar may end
        return Walk(accepted=bool(matcher.accept_token(self._eos)), consumed=len(tokens))

    def mask_seconds(self, tokens: Sequence[int], positions: Sequence[int]) -> list[float]:
        import xgrammar

        matcher = xgrammar.GrammarMatcher(self._compiled)
        bitmask = np.zeros((1, (self._n_vocab + 31) // 32), dtype=np.int32)
        return time_masks(tokens, positions, lambda: seconds_of(lambda: matcher.fill_next_token_bitmask(bitmask)),
                          matcher.accept_token)

    def close(self) -> None:
        pass


def _compiler(vocab: Vocabulary) -> Any:
    import xgrammar

    encoded = [piece or b"" for piece in vocab.token_pieces]
    info = xgrammar.TokenizerInfo(
        encoded,
        vocab_type=xgrammar.VocabType.RAW,
        vocab_size=vocab.n_vocab,
        stop_token_ids=[vocab.eos],
    )
    return xgrammar.GrammarCompiler(info)


@engines.register("xgrammar")
class XgrammarEngine(Engine):
    distribution = "xgrammar"
    module = "xgrammar"
    install_hint = "pip install 'conformbench[xgrammar]'"

    def _compiled(self, text: str, vocab: Vocabulary) -> Any:
        compiler = vocab.memo("xgrammar.compiler", lambda: _compiler(vocab))
        try:
            return compiler.compile_json_schema(text)
        except Exception as exc:  # noqa: BLE001 - tvm-ffi errors of several types
            raise self.unsupported(exc) from None

    def _acceptor(self, schema: Schema, text: str, vocab: Vocabulary, timeout_s: float | None) -> Acceptor:
        return _Acceptor(self._compiled(text, vocab), vocab)

    def _build(
        self, schema: Schema, text: str, vocab: Vocabulary
    ) -> tuple[str, Callable[[int], DecodeHooks]]:
        import xgrammar

        compiled = self._compiled(text, vocab)
        stop_ids = frozenset({vocab.eos})

        def start(prompt_tokens: int) -> DecodeHooks:
            matcher = _Matcher(xgrammar.GrammarMatcher(compiled))
            return DecodeHooks(processor=MaskProcessor(matcher, prompt_tokens, stop_ids))

        return str(compiled.grammar), start
