"""Picking a sequence's next token from a logits array in batched decoding.

Argmax (first index on ties, like llama.cpp's greedy sampler), or a llama.cpp
sampler chain applied to the array as ``llama_sampler_sample`` applies it to
a context's logits row: every token as (id, logit, p = 0) in id order,
``llama_sampler_apply``, the selected token, ``llama_sampler_accept``. Working
on an array instead of a context row lets a sequence sample from logits kept
from an earlier step (a twin's first token: ``batch``)."""

from __future__ import annotations

import ctypes
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from conformbench.backends.llamacpp.token_masks import BoolArray
from conformbench.errors import BackendError

__all__ = ["FloatArray", "SamplerChain", "TokenPicker"]

FloatArray = npt.NDArray[np.float32]


class SamplerChain(Protocol):
    """A llama.cpp sampler chain (llama-cpp-python's ``LlamaSampler``)."""

    sampler: Any  # the llama_sampler pointer

    def close(self) -> None: ...


class TokenPicker:
    """Picks tokens for the sequences of one decoder (one reusable buffer)."""

    def __init__(self, n_vocab: int) -> None:
        import llama_cpp

        self._lib = llama_cpp
        self._data = (llama_cpp.llama_token_data * n_vocab)()
        # a numpy view of the C array: fields id, logit, p per token
        self._view = np.ctypeslib.as_array(self._data)
        self._ids = np.arange(n_vocab, dtype=np.int32)
        self._n_vocab = n_vocab

    def pick(self, logits: FloatArray, allowed: BoolArray | None, chain: SamplerChain | None) -> int:
        """The next token; ``allowed`` (a grammar's mask) sets the others to -inf."""
        if allowed is not None:
            logits = np.where(allowed, logits, np.float32(-np.inf)).astype(np.float32, copy=False)
        if chain is None:
            return int(np.argmax(logits))
        lib, view = self._lib, self._view
        view["id"] = self._ids  # a sampler may have reordered the last call's
        view["logit"] = logits
        view["p"] = 0.0
        cur = lib.llama_token_data_array(data=ctypes.cast(self._data, ctypes.POINTER(lib.llama_token_data)),
                                         size=self._n_vocab, selected=-1, sorted=False)
        lib.llama_sampler_apply(chain.sampler, ctypes.byref(cur))
        if not 0 <= cur.selected < cur.size:
            raise BackendError(f"the sampler chain selected no token ({cur.selected})")
        token = int(cur.data[cur.selected].id)
        lib.llama_sampler_accept(chain.sampler, token)
        return token
