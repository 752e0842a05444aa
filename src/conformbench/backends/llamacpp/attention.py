"""Attention on the schema at the answer position (``--attention``).

llama.cpp's graph evaluation callback (``cb_eval`` in the context
parameters) sees every tensor the graph computes; with flash attention off,
layer L's softmaxed attention is the tensor ``kq_soft_max-L``, laid out
(keys padded, queries, heads) from fastest to slowest, read with
``ggml_backend_tensor_get`` from the ggml library llama-cpp-python ships.
The probe evaluates the prompt in a context of its own on the same weights
(same batch size, so the same arithmetic) and keeps, per layer, the last
query row (the position whose logits choose the first generated token)
averaged over heads. The padding keys get no mass (their mask is -inf);
the real keys' mass sums to 1.

The schema's token span comes from the tokens' own bytes: each token's
piece is its text, so byte offsets map to tokens exactly; the schema is the
last occurrence of its text in the prompt (few-shot examples come first).
The span is split 30/40/30 by the fraction of the schema's tokens before a
token, as Figure 1's position buckets are. Only the per-layer numbers are
kept, never the tensors.
"""

from __future__ import annotations

import ctypes
import os
from typing import Any

import numpy as np
import numpy.typing as npt

from conformbench.backends.llamacpp.vocabulary import detokenize
from conformbench.errors import BackendError
from conformbench.records.attention_record import PROFILE_BINS, AttentionRecord

__all__ = ["AttentionProbe", "mass_split", "token_span"]

FloatArray = npt.NDArray[np.float64]
_PREFIX = b"kq_soft_max-"


def _ggml() -> Any:
    import llama_cpp

    lib = ctypes.CDLL(os.path.join(os.path.dirname(llama_cpp.__file__), "lib", "libggml-base.so"))
    lib.ggml_get_name.restype = ctypes.c_char_p
    lib.ggml_get_name.argtypes = [ctypes.c_void_p]
    lib.ggml_nelements.restype = ctypes.c_int64
    lib.ggml_nelements.argtypes = [ctypes.c_void_p]
    lib.ggml_nbytes.restype = ctypes.c_size_t
    lib.ggml_nbytes.argtypes = [ctypes.c_void_p]
    lib.ggml_backend_tensor_get.restype = None
    lib.ggml_backend_tensor_get.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t]
    return lib


def token_span(pieces: list[bytes], text: str) -> tuple[int, int] | None:
    """[first, end) indices of the tokens covering the last occurrence of
    ``text`` in the concatenated ``pieces``; None when it is not there."""
    whole = b"".join(pieces)
    needle = text.encode("utf-8")
    at = whole.rfind(needle) if needle else -1
    if at < 0:
        return None
    ends = np.cumsum([len(p) for p in pieces])
    first = int(np.searchsorted(ends, at, side="right"))
    last = int(np.searchsorted(ends, at + len(needle), side="left"))
    return first, last + 1


def mass_split(row: FloatArray, span: tuple[int, int]) -> tuple[tuple[float, float, float], list[float]]:
    """(begin, middle, end) mass of ``row`` over the span's tokens (30/40/30
    by the fraction of the schema's tokens before each) and the mass on
    PROFILE_BINS equal slices of it."""
    part = row[span[0]:span[1]]
    frac = np.arange(len(part)) / max(len(part), 1)
    begin = float(part[frac < 0.3].sum())
    middle = float(part[(frac >= 0.3) & (frac < 0.7)].sum())
    end = float(part[frac >= 0.7].sum())
    bins = np.minimum((frac * PROFILE_BINS).astype(int), PROFILE_BINS - 1)
    profile = np.bincount(bins, weights=part, minlength=PROFILE_BINS)
    return (begin, middle, end), [float(x) for x in profile]


class AttentionProbe:
    """Evaluates prompts with the attention callback on (a context of its own)."""

    def __init__(self, llm: Any) -> None:
        import llama_cpp

        self._lib = llama_cpp
        self._llm = llm
        self._ggml = _ggml()
        self.heads = int(llama_cpp.llama_model_n_head(llm.model))
        self.layers = int(llama_cpp.llama_model_n_layer(llm.model))
        self._n_batch = int(llm.n_batch)
        #: layer -> last query row (mean over heads, all keys incl. padding)
        self.rows: dict[int, FloatArray] = {}
        self._armed = False
        self._query = 0
        # kept referenced: llama.cpp holds only the C pointer
        self._callback = llama_cpp.ggml_backend_sched_eval_callback(self._on_tensor)
        params = llama_cpp.llama_context_params.from_buffer_copy(llm.context_params)
        params.flash_attn_type = llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED
        params.n_seq_max = 1
        params.cb_eval = self._callback
        self._ctx = llama_cpp.llama_init_from_model(llm.model, params)
        if self._ctx is None:
            raise BackendError("llama.cpp could not create the attention context")
        self._batch = llama_cpp.llama_batch_init(self._n_batch, 0, 1)

    def _on_tensor(self, tensor: int, ask: bool, _user: int) -> bool:
        name = self._ggml.ggml_get_name(tensor) or b""
        wanted = self._armed and name.startswith(_PREFIX)
        if ask:
            return wanted
        if wanted:
            n = int(self._ggml.ggml_nelements(tensor))
            data = np.empty(n, dtype=np.float32)
            if int(self._ggml.ggml_nbytes(tensor)) != data.nbytes:
                return True  # not f32: left out rather than misread
            self._ggml.ggml_backend_tensor_get(tensor, data.ctypes.data, 0, data.nbytes)
            queries = self._queries
            grid = data.reshape(self.heads, queries, n // (self.heads * queries))
            self.rows[int(name[len(_PREFIX):])] = grid[:, self._query, :].mean(axis=0, dtype=np.float64)
        return True

    def softmax_rows(self, tokens: list[int]) -> dict[int, FloatArray]:
        """Per layer, the last prompt token's attention row (mean over heads)."""
        lib = self._lib
        lib.llama_memory_clear(lib.llama_get_memory(self._ctx), True)
        self.rows = {}
        for start in range(0, len(tokens), self._n_batch):
            chunk = tokens[start:start + self._n_batch]
            last = start + len(chunk) == len(tokens)
            for i, tok in enumerate(chunk):
                self._batch.token[i] = tok
                self._batch.pos[i] = start + i
                self._batch.n_seq_id[i] = 1
                self._batch.seq_id[i][0] = 0
                self._batch.logits[i] = last and i == len(chunk) - 1
            self._batch.n_tokens = len(chunk)
            self._armed, self._queries, self._query = last, len(chunk), len(chunk) - 1
            rc = lib.llama_decode(self._ctx, self._batch)
            self._armed = False
            if rc != 0:
                raise BackendError(f"llama_decode failed with code {rc} in the attention probe")
        return self.rows

    def capture(self, tokens: list[int], attend: str) -> AttentionRecord | None:
        """The record of ``tokens`` (a prompt) for the schema text ``attend``;
        None when the text is not in the prompt."""
        pieces = [detokenize(self._llm, [t], special=True) for t in tokens]
        span = token_span(pieces, attend)
        if span is None:
            return None
        rows = self.softmax_rows(tokens)
        bme: list[tuple[float, float, float]] = []
        profile: list[list[float]] = []
        for layer in range(self.layers):
            row = rows.get(layer)
            if row is None:
                raise BackendError(f"the attention of layer {layer} was not seen (flash attention on?)")
            split, bins = mass_split(row[: len(tokens)], span)
            bme.append(tuple(round(x, 6) for x in split))  # type: ignore[arg-type]
            profile.append([round(x, 6) for x in bins])
        return AttentionRecord(schema_tokens=span, keys=len(tokens), bme=bme,
                               schema_share=[round(sum(b), 6) for b in bme], profile=profile)

    def close(self) -> None:
        if self._ctx is not None:
            self._lib.llama_batch_free(self._batch)
            self._lib.llama_free(self._ctx)
            self._ctx = None
