"""llguidance (Microsoft's Earley-parser engine) on llama.cpp's vocabulary.

The tokenizer bridge reads the vocabulary straight from the llama.cpp model
(about 0.3 s for SmolLM2, so it is built once per model). A schema becomes a
grammar once; each generation gets a copy of a pristine matcher.

By default llguidance refuses a schema with a keyword it cannot enforce.
Here it compiles in its lenient mode (``"x-guidance": {"lenient": true}``):
the keyword is left to the validator, as every engine's gaps are, and the
grammar's own warnings ('Unimplemented keys: ["uniqueItems"]') are recorded
with each generation, so an item stays in the grammar's cell instead of
leaving it. What llguidance cannot compile even then is an
UnsupportedSchemaError with its own message.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from conformbench.engines.base import Acceptor, Built, DecodeHooks, Engine, Vocabulary, Walk, engines
from conformbench.engines.masking import MaskProcessor
from conformbench.jsontypes import Schema

__all__ = ["LlguidanceEngine", "llguidance_tokenizer"]


class _Matcher:
    def __init__(self, matcher: Any) -> None:
        self._m = matcher

    def advance(self, tokens: list[int]) -> None:
        if not self._m.consume_tokens(tokens):
            raise ValueError(self._m.get_error() or f"llguidance rejected tokens {tokens}")

    def fill_bitmask(self, bitmask: npt.NDArray[np.int32]) -> None:
        from llguidance.numpy import fill_next_token_bitmask

        fill_next_token_bitmask(self._m, bitmask)

    @property
    def llmatcher(self) -> Any:
        """The LLMatcher itself: batched decoding fills the masks of many
        sequences in one parallel llguidance call."""
        return self._m


class _Acceptor:
    """Walks tokens through copies of a pristine matcher."""

    def __init__(self, pristine: Any, n_vocab: int) -> None:
        self._pristine = pristine
        self._n_vocab = n_vocab

    def walk(self, tokens: Sequence[int]) -> Walk:
        matcher = self._pristine.deep_copy()
        consumed = matcher.try_consume_tokens(list(tokens))
        if consumed < len(tokens):
            return Walk(accepted=False, consumed=consumed)
        return Walk(accepted=bool(matcher.is_accepting()), consumed=consumed)

    def mask_seconds(self, tokens: Sequence[int], positions: Sequence[int]) -> list[float]:
        from llguidance.numpy import fill_next_token_bitmask

        matcher = self._pristine.deep_copy()
        bitmask = np.zeros((1, (self._n_vocab + 31) // 32), dtype=np.int32)
        wanted = sorted(set(positions))
        out: list[float] = []
        for i in range(len(tokens) + 1):
            if len(out) < len(wanted) and wanted[len(out)] == i:
                start = time.perf_counter()
                fill_next_token_bitmask(matcher, bitmask)
                out.append(time.perf_counter() - start)
            if i == len(tokens) or len(out) == len(wanted) or not matcher.consume_token(tokens[i]):
                break
        return out

    def close(self) -> None:
        pass


def llguidance_tokenizer(vocab: Vocabulary) -> Any:
    """llguidance's tokenizer for the vocab's vocabulary (0.4 s: memoise it)."""
    from llguidance.llamacpp import lltokenizer_from_vocab

    # The bridge calls a llama-cpp-python function deprecated in 0.3.x once
    # per token: 49k identical warnings.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return lltokenizer_from_vocab(vocab.llama_vocab, n_vocab=vocab.n_vocab)


@engines.register("llguidance")
class LlguidanceEngine(Engine):
    distribution = "llguidance"
    module = "llguidance"

    def _matcher(self, text: str, vocab: Vocabulary) -> tuple[str, Any]:
        """(grammar JSON, a pristine matcher) for the schema text."""
        from llguidance import LLMatcher

        tokenizer = vocab.memo("llguidance.tokenizer", lambda: llguidance_tokenizer(vocab))
        try:
            grammar = LLMatcher.grammar_from_json_schema(text, defaults={"lenient": True})
        except ValueError as exc:
            raise self.unsupported(exc) from None
        pristine = LLMatcher(tokenizer, grammar, log_level=0)
        if pristine.is_error():
            raise self.unsupported(pristine.get_error())
        return grammar, pristine

    def _acceptor(self, schema: Schema, text: str, vocab: Vocabulary, timeout_s: float | None) -> Acceptor:
        return _Acceptor(self._matcher(text, vocab)[1], vocab.n_vocab)

    def _build(self, schema: Schema, text: str, vocab: Vocabulary) -> Built:
        grammar, pristine = self._matcher(text, vocab)
        unenforced = tuple(str(w) for w in pristine.get_grammar_warnings())
        stop_ids = frozenset({vocab.eos})

        def start(prompt_tokens: int) -> DecodeHooks:
            matcher = _Matcher(pristine.deep_copy())
            return DecodeHooks(processor=MaskProcessor(matcher, prompt_tokens, stop_ids))

        return Built(grammar, start, unenforced)
