"""llama.cpp's own grammar sampler driven token by token, without a model:
the ``Acceptor`` of the ``gbnf`` engine.

Only the sampler's ``apply`` is safe on a token the grammar refuses (it sets
the token's logit to -inf); ``accept`` on such a token throws a C++ exception
or aborts the process (an end-of-generation token while the grammar cannot
end). So every token is first applied alone, as the only candidate, and
accepted only when its logit survives; the end is checked the same way with
EOS as the only candidate.
"""

from __future__ import annotations

import ctypes
import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from conformbench.engines.base import Vocabulary, Walk, time_masks

__all__ = ["GrammarSamplerAcceptor", "init_grammar_sampler"]

#: llama_token_data {int32 id; float logit; float p}
_TOKEN_DATA = np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)])


def init_grammar_sampler(vocab: Vocabulary, gbnf: str) -> Any:
    """llama.cpp's grammar sampler for ``gbnf``, or NULL (falsy) when llama.cpp
    cannot parse it. Its parser prints the error and the whole grammar on the
    C-level stdout and stderr, which would tear through progress bars and
    command output, so both are silenced for the parse."""
    import llama_cpp
    from llama_cpp._utils import suppress_stdout_stderr

    with suppress_stdout_stderr(disable=False):
        return llama_cpp.llama_sampler_init_grammar(vocab.llama_vocab, gbnf.encode(), b"root")


class GrammarSamplerAcceptor:
    """One GBNF grammar in llama.cpp's grammar sampler for ``vocab``."""

    def __init__(self, vocab: Vocabulary, gbnf: str) -> None:
        import llama_cpp

        self._ll: Any = llama_cpp
        self._eos = vocab.eos
        self._n_vocab = vocab.n_vocab
        self._sampler: Any = init_grammar_sampler(vocab, gbnf)
        if not self._sampler:
            raise ValueError("llama.cpp could not parse the GBNF grammar")
        self._one: Any = (llama_cpp.llama_token_data * 1)()
        self._full: np.ndarray[Any, Any] | None = None

    def _apply(self, data: Any, size: int) -> None:
        candidates = self._ll.llama_token_data_array(data, size, -1, False)
        self._ll.llama_sampler_apply(self._sampler, ctypes.byref(candidates))

    def _allows(self, token: int) -> bool:
        self._one[0].id = token
        self._one[0].logit = 0.0
        self._apply(self._one, 1)
        return math.isfinite(self._one[0].logit)

    def _restart(self) -> None:
        # resetting a grammar sampler rebuilds its grammar from the text
        self._ll.llama_sampler_reset(self._sampler)

    def walk(self, tokens: Sequence[int]) -> Walk:
        self._restart()
        for i, token in enumerate(tokens):
            if not self._advance(token):
                return Walk(accepted=False, consumed=i)
        return Walk(accepted=self._allows(self._eos), consumed=len(tokens))

    def _full_mask_seconds(self) -> float:
        """One apply over the whole vocabulary, as llama-cpp-python's sampler
        chain does for every generated token."""
        if self._full is None:
            self._full = np.zeros(self._n_vocab, dtype=_TOKEN_DATA)
        full = self._full
        full["id"] = np.arange(self._n_vocab, dtype=np.int32)
        full["logit"] = 0.0
        data = ctypes.cast(full.ctypes.data, ctypes.POINTER(self._ll.llama_token_data))
        start = time.perf_counter()
        self._apply(data, self._n_vocab)
        return time.perf_counter() - start

    def _advance(self, token: int) -> bool:
        if not self._allows(token):
            return False
        self._ll.llama_sampler_accept(self._sampler, token)
        return True

    def mask_seconds(self, tokens: Sequence[int], positions: Sequence[int]) -> list[float]:
        self._restart()
        return time_masks(tokens, positions, self._full_mask_seconds, self._advance)

    def close(self) -> None:
        if self._sampler:
            self._ll.llama_sampler_free(self._sampler)
            self._sampler = None
