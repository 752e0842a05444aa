"""Batched decoding through llama.cpp's low-level batch API.

llama-cpp-python's ``Llama`` decodes one sequence at a time. On a small model
most of a decode step is fixed cost (graph build, weight reads), so several
sequences can share one ``llama_decode`` call almost for free. This module
keeps up to ``max_sequences`` sequences in flight, each with its own seq id
and KV cache stream; a finished sequence's slot is cleared and refilled with
the next request (continuous batching), and prompt prefill of new requests
rides along in the same batch as the decode steps of running ones.

Sequences of one prompt share its prefill. A request whose prompt is that
of a sequence in flight (the K samples of an item) is its twin: once that
sequence has evaluated the prompt, the twin copies its KV cells
(``llama_memory_seq_cp``) and draws its first token from the logits that
sequence kept of its last prompt token, so it starts from exactly what its
own prefill would give. Twins need split KV streams: in one unified store
their later tokens drifted from the sequential ones. With ``share_prefix``
set, a request that shares at least that many leading tokens with a
sequence in flight (arms that open with one preamble) copies those cells and
evaluates only the rest (at least its last token); that rest is computed in
other row groups than a whole-prompt prefill, so it can flip a near-tie
(measured: 2 of 16 sampled texts changed), which is why it is off unless
asked for.

A sequence picks its tokens by argmax (first index on ties, like llama.cpp's
greedy sampler) or, given a ``sampler`` factory, through a llama.cpp sampler
chain of its own (``sampling.TokenPicker``, as ``llama_sampler_sample`` applies
it): the chain ``Llama.generate`` builds, seeded per sequence, so a sampled
or GBNF-constrained sequence draws what it would draw alone from the same
logits. A token mask (an llguidance matcher, any ``TokenMask``) sets the
refused tokens to -inf first, as the sequential decoder's logits processor
does; the masks of one step are filled together (``token_masks``). The
benchmark and the slow tests check token identity with sequential decoding
on the real model.
"""

from __future__ import annotations

import ctypes
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from conformbench.backends.llamacpp.next_token import FloatArray, SamplerChain, TokenPicker
from conformbench.backends.llamacpp.token_masks import BoolArray, MaskFiller, TokenMask
from conformbench.backends.llamacpp.vocabulary import detokenize
from conformbench.errors import BackendError, UsageError

if TYPE_CHECKING:
    import llama_cpp

    from conformbench.engines.toll_meter import TollMeter

__all__ = [
    "BatchedConfig",
    "BatchedDecoder",
    "Finish",
    "SequenceRequest",
    "SequenceResult",
]

Finish = Literal["stop", "length", "loop", "error"]


@dataclass(frozen=True)
class BatchedConfig:
    max_sequences: int = 8
    #: KV cache cells per sequence (prompt + completion must fit)
    ctx_per_sequence: int = 2048
    #: tokens per llama_decode call (decode steps plus prefill chunks)
    batch_tokens: int = 512
    threads: int | None = None
    #: the fewest leading tokens a prompt copies from a different one in
    #: flight instead of evaluating them (0, the default: only twins share;
    #: the rest evaluated in other row groups can flip a near-tie, measured in
    #: benchmarks/sequences.py: 2 of 16 sampled texts changed at 32)
    share_prefix: int = 0
    #: one KV cache for all sequences instead of a stream each; a shared
    #: prefix is then tagged, not copied (split streams copy whole sequences).
    #: Off: with it, even twins' later tokens differed from sequential ones
    kv_unified: bool = False


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
    #: makes the sequence's sampler chain when it starts (None: argmax)
    sampler: Callable[[], SamplerChain] | None = None
    #: measures what the mask takes from the model at each step (None: not measured)
    toll: TollMeter | None = None


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
    #: the seq id whose first ``pos`` KV cells this one copies before it
    #: evaluates its ``pending`` tokens (None: nothing left to copy)
    source: int | None = None
    #: same prompt as ``source``: it copies all of it and its first logits
    twin: bool = False
    #: the logits its first token is drawn from, kept while it lives (a twin
    #: admitted later starts from them)
    first_logits: FloatArray | None = None
    sampler: SamplerChain | None = None


def _common_prefix(a: tuple[int, ...], b: tuple[int, ...], limit: int) -> int:
    n = min(len(a), len(b), limit)
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


class BatchedDecoder:
    """Batched generation on the model of an existing ``Llama``.

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
        self._masks = MaskFiller(config.max_sequences, self.n_vocab)
        self._picker = TokenPicker(self.n_vocab)
        #: prompt tokens copied from another sequence instead of evaluated
        self.prefix_tokens_shared = 0

    def _new_context(self, llm: llama_cpp.Llama, config: BatchedConfig) -> Any:
        lib = self._lib
        # Same settings as the Llama's own context (flash attention, KV types...)
        # so that logits match sequential decoding; only the sequence layout differs.
        params = lib.llama_context_params.from_buffer_copy(llm.context_params)
        params.n_seq_max = config.max_sequences
        params.n_ctx = config.ctx_per_sequence * config.max_sequences
        params.n_batch = config.batch_tokens
        params.n_ubatch = config.batch_tokens
        # split: attention never scans other sequences' cells
        params.kv_unified = config.kv_unified
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
                index, req = queue.popleft()
                slots[free.pop()] = self._admit(index, req, slots)
            self._copy_shared(slots)
            self._decode_step(slots)
            self._copy_shared(slots)  # before any source can end and be cleared
            ready = [s for s, slot in slots.items()
                     if slot.out_row >= 0 or (slot.first_logits is not None and not slot.tokens)]
            masks = self._masks.fill([slots[s].request.mask for s in ready])
            for seq_id, allowed in zip(ready, masks, strict=True):
                done = self._sample(slots[seq_id], allowed)
                if done is not None:
                    results[slots[seq_id].index] = done
                    self._release(seq_id, slots)
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

    def _admit(self, index: int, req: SequenceRequest, slots: dict[int, _Slot]) -> _Slot:
        """A slot for ``req``, set to copy what it shares with a sequence in
        flight: a twin's whole prompt and first logits (exactly what its own
        prefill would give), else, if ``share_prefix`` is set, the longest
        common prefix of at least that many tokens (its last token evaluated)."""
        slot = _Slot(index, req, deque(req.prompt_tokens))
        if req.sampler is not None:
            slot.sampler = req.sampler()
        prompt = req.prompt_tokens
        twins = [s for s, other in slots.items() if other.request.prompt_tokens == prompt]
        if twins:
            slot.source, slot.pos, slot.twin = twins[0], len(prompt), True
            slot.pending.clear()
            return slot
        if self.config.share_prefix == 0:
            return slot
        best, shared = None, 0
        for seq_id, other in slots.items():
            n = _common_prefix(prompt, other.request.prompt_tokens, len(prompt) - 1)
            if n > shared:
                best, shared = seq_id, n
        if best is not None and self.config.share_prefix <= shared:
            slot.source, slot.pos = best, shared
            for _ in range(shared):
                slot.pending.popleft()
        return slot

    def _copy_shared(self, slots: dict[int, _Slot]) -> None:
        """Keep the first logits of every slot that just evaluated its prompt,
        then copy the shared cells of every waiting slot whose source has
        evaluated them (repeated: a source may itself have just copied)."""
        for slot in slots.values():
            if slot.out_row >= 0 and not slot.tokens and slot.first_logits is None:
                slot.first_logits = self._logits(slot.out_row).copy()
        progress = True
        while progress:
            progress = False
            for seq_id, slot in slots.items():
                if slot.source is None:
                    continue
                src = slots[slot.source]
                ready = src.first_logits is not None if slot.twin else src.pos >= slot.pos
                if src.source is not None or not ready:
                    continue
                self._fork(slot.source, seq_id, slot.pos)
                if slot.twin:
                    slot.first_logits = src.first_logits
                slot.source, progress = None, True
                self.prefix_tokens_shared += slot.pos

    def _fork(self, src: int, dst: int, n: int) -> None:
        lib = self._lib
        if self.config.kv_unified:
            lib.llama_memory_seq_cp(self._mem, src, dst, 0, n)
        else:  # across KV streams llama.cpp copies whole sequences only
            lib.llama_memory_seq_cp(self._mem, src, dst, -1, -1)
            lib.llama_memory_seq_rm(self._mem, dst, n, -1)

    def _release(self, seq_id: int, slots: dict[int, _Slot]) -> None:
        waiting = [s for s, slot in slots.items() if slot.source == seq_id]
        if waiting:  # _copy_shared runs after every decode, so never
            raise BackendError(f"batched decoding ended sequence {seq_id} before {waiting} copied its prefix")
        del slots[seq_id]
        self._lib.llama_memory_seq_rm(self._mem, seq_id, -1, -1)

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
            while slot.source is None and slot.pending and n < self.config.batch_tokens:
                token = slot.pending.popleft()
                n = self._add(n, token, slot, seq_id, logits=not slot.pending)
        if n == 0:
            return  # every slot waits for a prefix (never: a source always has work)
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

    def _logits(self, row: int) -> FloatArray:
        ptr = self._lib.llama_get_logits_ith(self._ctx, row)
        return np.ctypeslib.as_array(ctypes.cast(ptr, ctypes.POINTER(ctypes.c_float)), shape=(self.n_vocab,))

    def _pick(self, slot: _Slot, allowed: BoolArray | None) -> int:
        first = slot.first_logits if not slot.tokens else None
        logits = first if first is not None else self._logits(slot.out_row)
        if allowed is not None and slot.request.toll is not None:
            slot.request.toll.observe(logits, allowed, len(slot.tokens))
        return self._picker.pick(logits, allowed, slot.sampler)

    def _sample(self, slot: _Slot, allowed: BoolArray | None) -> SequenceResult | None:
        """Pick the slot's next token; a result when the sequence is done."""
        if allowed is not None and not allowed.any():
            return self._result(slot, "error", "the grammar allows no token")
        token = self._pick(slot, allowed)
        if self._lib.llama_vocab_is_eog(self._vocab, token):
            return self._result(slot, "stop")
        slot.tokens.append(token)
        mask = slot.request.mask
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
        if slot.sampler is not None:
            slot.sampler.close()
        prompt = list(slot.request.prompt_tokens)
        raw = detokenize(self._llm, slot.tokens)  # every piece in full (vocabulary.detokenize)
        return SequenceResult(
            tokens=slot.tokens,
            # like the llamacpp backend: a split multi-byte character shows as U+FFFD
            text=bytes(raw).decode("utf-8", errors="replace"),
            finish_reason=reason,
            prompt_tokens=len(prompt),
            error=error,
            seconds=time.perf_counter() - slot.started,
        )
