"""Batched greedy decoding through llama.cpp's low-level batch API.

llama-cpp-python's ``Llama`` decodes one sequence at a time. On a small model
most of a decode step is fixed cost (graph build, weight reads), so several
sequences can share one ``llama_decode`` call almost for free. This module
keeps up to ``max_sequences`` sequences in flight, each with its own seq id
and KV cache stream; a finished sequence's slot is cleared and refilled with
the next request (continuous batching), and prompt prefill of new requests
rides along in the same batch as the decode steps of running ones.

Sampling is greedy (argmax, first index on ties, like llama.cpp's greedy
sampler), optionally restricted per sequence by a token mask such as an
llguidance matcher. The masks of one step are filled together: llguidance
matchers in one parallel call (``fill_next_token_bitmask_par``), others one
by one. Outputs are meant to be token-identical to sequential
greedy decoding with ``Llama.create_completion(temperature=0)``; the
benchmark and the slow test check that on the real model.
"""

from __future__ import annotations

import ctypes
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np
import numpy.typing as npt

from conformbench.errors import BackendError, UsageError

if TYPE_CHECKING:
    import llama_cpp

    from conformbench.engines.masking import TokenMatcher

__all__ = [
    "BatchedConfig",
    "BatchedDecoder",
    "Finish",
    "LLGuidanceMask",
    "MatcherMask",
    "SequenceRequest",
    "SequenceResult",
    "TokenMask",
]

BoolArray = npt.NDArray[np.bool_]
Finish = Literal["stop", "length", "loop", "error"]


class TokenMask(Protocol):
    """Restricts the next token of one sequence (a grammar)."""

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


@dataclass(frozen=True)
class BatchedConfig:
    max_sequences: int = 8
    #: KV cache cells per sequence (prompt + completion must fit)
    ctx_per_sequence: int = 2048
    #: tokens per llama_decode call (decode steps plus prefill chunks)
    batch_tokens: int = 512
    threads: int | None = None


@dataclass(frozen=True)
class SequenceRequest:
    prompt_tokens: tuple[int, ...]
    max_tokens: int
    mask: TokenMask | None = None
    #: called with the tokens so far after each token is taken (and the mask
    #: has consumed it): a finish reason ends the sequence there. A caller
    #: that mirrors a sequential decoder's stop rules (stop strings, budget,
    #: loop stop) puts them here; without it the sequence ends at max_tokens.
    check: Callable[[list[int]], Finish | None] | None = None


@dataclass
class SequenceResult:
    tokens: list[int]
    text: str
    finish_reason: Finish
    prompt_tokens: int
    error: str | None = None
    #: from the sequence's first prefill to its end (shared with the others
    #: decoded alongside it)
    seconds: float = 0.0


@dataclass
class _Slot:
    """One sequence in flight."""

    index: int  # position of its request in the input list
    request: SequenceRequest
    pending: deque[int]  # prompt tokens not yet sent to the model
    pos: int = 0  # next position in its KV stream
    out_row: int = -1  # its row of logits after the current decode, -1 if none
    tokens: list[int] = field(default_factory=list)
    started: float = field(default_factory=time.perf_counter)


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
        return getattr(self._matcher, "llmatcher", None)


def _llmatcher(mask: TokenMask | None) -> Any:
    return getattr(mask, "llmatcher", None) if mask is not None else None


class BatchedDecoder:
    """Greedy batched generation on the model of an existing ``Llama``.

    The decoder owns a second llama.cpp context on the same weights (so the
    Llama object must outlive it) with one KV stream per sequence slot.
    """

    def __init__(self, llm: llama_cpp.Llama, config: BatchedConfig) -> None:
        import llama_cpp

        if config.max_sequences < 1 or config.batch_tokens < config.max_sequences:
            raise UsageError("batched decoding needs max_sequences >= 1 and batch_tokens >= max_sequences")
        self._lib = llama_cpp
        self._llm = llm
        self.config = config
        self._ctx = self._new_context(llm, config)
        self._mem = llama_cpp.llama_get_memory(self._ctx)
        self._vocab = llama_cpp.llama_model_get_vocab(llm.model)
        self.n_vocab = int(llama_cpp.llama_vocab_n_tokens(self._vocab))
        self._batch = llama_cpp.llama_batch_init(config.batch_tokens, 0, 1)
        self._executor: Any = None  # llguidance's thread pool, made on first use
        self._bitmasks = np.zeros((config.max_sequences, (self.n_vocab + 31) // 32), dtype=np.int32)

    def _new_context(self, llm: llama_cpp.Llama, config: BatchedConfig) -> Any:
        lib = self._lib
        # Same settings as the Llama's own context (flash attention, KV types...)
        # so that logits match sequential decoding; only the sequence layout differs.
        params = lib.llama_context_params.from_buffer_copy(llm.context_params)
        params.n_seq_max = config.max_sequences
        params.n_ctx = config.ctx_per_sequence * config.max_sequences
        params.n_batch = config.batch_tokens
        params.n_ubatch = config.batch_tokens
        # one KV stream per sequence: attention never scans other sequences' cells
        params.kv_unified = False
        if config.threads is not None:
            params.n_threads = params.n_threads_batch = config.threads
        ctx = lib.llama_init_from_model(llm.model, params)
        if ctx is None:
            raise BackendError("llama.cpp could not create a batched context")
        return ctx

    def close(self) -> None:
        if self._ctx is not None:
            self._lib.llama_batch_free(self._batch)
            self._lib.llama_free(self._ctx)
            self._ctx = None

    def __enter__(self) -> BatchedDecoder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def generate(self, requests: list[SequenceRequest]) -> list[SequenceResult]:
        """Results in request order."""
        for req in requests:
            self._check(req)
        # nothing survives from an earlier call (one that raised included)
        self._lib.llama_memory_clear(self._mem, True)
        queue = deque(enumerate(requests))
        free = list(range(self.config.max_sequences))[::-1]
        slots: dict[int, _Slot] = {}
        results: dict[int, SequenceResult] = {}
        while queue or slots:
            while queue and free:
                seq_id = free.pop()
                index, req = queue.popleft()
                slots[seq_id] = _Slot(index, req, deque(req.prompt_tokens))
            self._decode_step(slots)
            ready = [s for s, slot in slots.items() if slot.out_row >= 0]
            masks = self._masks([slots[s] for s in ready])
            for seq_id, allowed in zip(ready, masks, strict=True):
                done = self._sample(slots[seq_id], allowed)
                if done is not None:
                    results[slots[seq_id].index] = done
                    del slots[seq_id]
                    self._lib.llama_memory_seq_rm(self._mem, seq_id, -1, -1)
                    free.append(seq_id)
        return [results[i] for i in range(len(requests))]

    def _check(self, req: SequenceRequest) -> None:
        if not req.prompt_tokens:
            raise UsageError("batched decoding needs a non-empty prompt")
        if req.max_tokens < 1:
            raise UsageError(f"max_tokens must be at least 1, not {req.max_tokens}")
        if len(req.prompt_tokens) + req.max_tokens > self.config.ctx_per_sequence:
            raise UsageError(
                f"prompt ({len(req.prompt_tokens)} tokens) + max_tokens ({req.max_tokens}) "
                f"exceed ctx_per_sequence ({self.config.ctx_per_sequence})"
            )

    def _decode_step(self, slots: dict[int, _Slot]) -> None:
        """One llama_decode: the last sampled token of every decoding slot,
        then as many pending prompt tokens as the batch still holds."""
        batch = self._batch
        n = 0
        for seq_id, slot in slots.items():
            slot.out_row = -1
            if not slot.pending and slot.tokens:
                n = self._add(n, slot.tokens[-1], slot, seq_id, logits=True)
        for seq_id, slot in slots.items():
            while slot.pending and n < self.config.batch_tokens:
                token = slot.pending.popleft()
                n = self._add(n, token, slot, seq_id, logits=not slot.pending)
        batch.n_tokens = n
        rc = self._lib.llama_decode(self._ctx, batch)
        if rc != 0:
            raise BackendError(f"llama_decode failed with code {rc} (KV cache full or bad batch)")

    def _add(self, n: int, token: int, slot: _Slot, seq_id: int, logits: bool) -> int:
        batch = self._batch
        batch.token[n] = token
        batch.pos[n] = slot.pos
        batch.n_seq_id[n] = 1
        batch.seq_id[n][0] = seq_id
        batch.logits[n] = logits
        slot.pos += 1
        if logits:
            slot.out_row = n
        return n + 1

    def _masks(self, slots: list[_Slot]) -> list[BoolArray | None]:
        """The allowed tokens of each slot's next step (None: unconstrained);
        llguidance matchers filled together in one parallel call."""
        out: list[BoolArray | None] = [None] * len(slots)
        par: list[tuple[Any, int]] = []
        for i, slot in enumerate(slots):
            mask = slot.request.mask
            if _llmatcher(mask) is not None:
                par.append((_llmatcher(mask), len(par)))
            elif mask is not None:
                out[i] = mask.allowed(self.n_vocab)
        if par:
            rows = self._fill_parallel(par)
            at = iter(range(len(par)))
            for i, slot in enumerate(slots):
                if _llmatcher(slot.request.mask) is not None:
                    out[i] = rows[next(at)]
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

    def _sample(self, slot: _Slot, allowed: BoolArray | None) -> SequenceResult | None:
        """Pick the slot's next token; a result when the sequence is done."""
        ptr = self._lib.llama_get_logits_ith(self._ctx, slot.out_row)
        logits = np.ctypeslib.as_array(ctypes.cast(ptr, ctypes.POINTER(ctypes.c_float)), shape=(self.n_vocab,))
        mask = slot.request.mask
        if allowed is not None:
            if not allowed.any():
                return self._result(slot, "error", "the grammar allows no token")
            logits = np.where(allowed, logits, -np.inf)
        token = int(np.argmax(logits))
        if self._lib.llama_vocab_is_eog(self._vocab, token):
            return self._result(slot, "stop")
        slot.tokens.append(token)
        if mask is not None:
            try:
                mask.consume(token)
            except BackendError as exc:
                return self._result(slot, "error", str(exc))
        if slot.request.check is not None:
            reason = slot.request.check(slot.tokens)
            if reason is not None:
                return self._result(slot, reason)
        if mask is not None and mask.is_stopped():
            return self._result(slot, "stop")
        if len(slot.tokens) >= slot.request.max_tokens:
            return self._result(slot, "length")
        return None

    def _result(self, slot: _Slot, reason: Finish, error: str | None = None) -> SequenceResult:
        prompt = list(slot.request.prompt_tokens)
        raw = self._llm.detokenize(slot.tokens, prev_tokens=prompt)
        return SequenceResult(
            tokens=slot.tokens,
            # like the llamacpp backend: a split multi-byte character shows as U+FFFD
            text=bytes(raw).decode("utf-8", errors="replace"),
            finish_reason=reason,
            prompt_tokens=len(prompt),
            error=error,
            seconds=time.perf_counter() - slot.started,
        )
