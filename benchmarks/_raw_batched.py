"""The machine's batched ceiling: llama.cpp's low-level batch API with
nothing of conformbench in the loop.

Continuous batching written as plainly as the API allows: up to S
sequences in flight, each its own seq id, prompts prefilled in the same
batches as running sequences' decode steps, argmax over one (rows x vocab)
numpy view of the step's logits, a finished slot refilled from the queue.
Each sequence takes the tokens the measured decoder chose (so the work is
the same, constrained runs included) and no masks, stop checks, text
decoding or records: what the decode steps cost on this machine, so the
batched decoder's time over this one's is our overhead.
"""

from __future__ import annotations

import ctypes
import time
from collections import deque
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["RawBatched", "step_seconds"]


class RawBatched:
    def __init__(self, model: Path, threads: int, sequences: int, ctx_per_sequence: int,
                 kv_unified: bool) -> None:
        import llama_cpp

        from conformbench.backends.llamacpp.amx import loading_for_this_build

        self.lib = llama_cpp
        with loading_for_this_build():  # the backend's kernels (amx.py): no AMX crash, a fair ratio
            self.llm = llama_cpp.Llama(model_path=str(model), n_ctx=512, n_threads=threads,
                                       n_threads_batch=threads, seed=0, verbose=False)
        params = llama_cpp.llama_context_params.from_buffer_copy(self.llm.context_params)
        params.n_seq_max = sequences
        params.n_ctx = ctx_per_sequence * sequences
        params.n_batch = params.n_ubatch = 512
        params.kv_unified = kv_unified
        self.ctx = llama_cpp.llama_init_from_model(self.llm.model, params)
        self.mem = llama_cpp.llama_get_memory(self.ctx)
        self.vocab = llama_cpp.llama_model_get_vocab(self.llm.model)
        self.n_vocab = int(llama_cpp.llama_vocab_n_tokens(self.vocab))
        self.batch = llama_cpp.llama_batch_init(512, 0, 1)
        self.sequences = sequences
        self._live: dict[int, list[Any]] = {}

    def close(self) -> None:
        self.lib.llama_batch_free(self.batch)
        self.lib.llama_free(self.ctx)

    def generate(self, prompts: list[tuple[int, ...]], forced: list[list[int]]) -> list[list[int]]:
        """Decode every prompt, taking ``forced[i]``'s tokens in turn (the
        argmax is still computed each step, as a greedy decoder must) and
        ending where they end: the same work as the decoder that chose them."""
        lib, batch = self.lib, self.batch
        lib.llama_memory_clear(self.mem, True)
        queue = deque(enumerate(prompts))
        free = list(range(self.sequences))[::-1]
        # seq id -> [request index, pending prompt tokens, next position, output tokens]
        live = self._live = {}
        out: dict[int, list[int]] = {}
        while queue or live:
            while queue and free:
                index, prompt = queue.popleft()
                live[free.pop()] = [index, deque(prompt), 0, []]
            rows: list[int] = []
            n = 0
            for seq, (_, pending, _, toks) in live.items():
                if not pending:
                    n = self._add(n, toks[-1], seq, True)
                    rows.append(seq)
            for seq, (_, pending, _, _) in live.items():
                while pending and n < 512:
                    last = len(pending) == 1
                    n = self._add(n, pending.popleft(), seq, last)
                    if last:
                        rows.append(seq)
            batch.n_tokens = n
            if lib.llama_decode(self.ctx, batch) != 0:
                raise RuntimeError("llama_decode failed")
            ptr = ctypes.cast(lib.llama_get_logits(self.ctx), ctypes.POINTER(ctypes.c_float))
            np.ctypeslib.as_array(ptr, shape=(len(rows), self.n_vocab)).argmax(axis=1)
            for seq in rows:
                index, _, _, toks = live[seq]
                # one decode past the last token, as a decoder that then picks
                # end-of-generation (one step more than one cut at its budget)
                done = len(toks) == len(forced[index])
                if not done:
                    toks.append(forced[index][len(toks)])
                else:
                    out[index] = toks
                    del live[seq]
                    lib.llama_memory_seq_rm(self.mem, seq, -1, -1)
                    free.append(seq)
        return [out[i] for i in range(len(prompts))]

    def _add(self, n: int, token: int, seq: int, logits: bool) -> int:
        state = self._live[seq]
        batch = self.batch
        batch.token[n], batch.pos[n], batch.n_seq_id[n] = token, state[2], 1
        batch.seq_id[n][0] = seq
        batch.logits[n] = logits
        state[2] += 1
        return n + 1


def step_seconds(llm: Any, prompt: list[int], sequences: int, steps: int) -> float:
    """Seconds per llama_decode of ``sequences`` rows, each its own sequence
    forked from one prefill of ``prompt`` in one unified KV store, as beam
    search decodes (nothing else in the loop): the ceiling of N beams' step
    against one greedy step on this machine."""
    import llama_cpp as lib

    params = lib.llama_context_params.from_buffer_copy(llm.context_params)
    params.n_seq_max = 2 * sequences
    params.n_ctx = -(-(len(prompt) + sequences * steps + 2) // 256) * 256
    params.kv_unified = True
    ctx = lib.llama_init_from_model(llm.model, params)
    batch = lib.llama_batch_init(max(512, sequences), 0, 1)
    try:
        for start in range(0, len(prompt), 512):
            chunk = prompt[start:start + 512]
            for i, token in enumerate(chunk):
                batch.token[i], batch.pos[i], batch.n_seq_id[i] = token, start + i, 1
                batch.seq_id[i][0], batch.logits[i] = 0, start + i == len(prompt) - 1
            batch.n_tokens = len(chunk)
            lib.llama_decode(ctx, batch)
        mem = lib.llama_get_memory(ctx)
        for seq in range(1, sequences):
            lib.llama_memory_seq_cp(mem, 0, seq, -1, -1)
        began = time.perf_counter()
        for step in range(steps):
            for seq in range(sequences):
                batch.token[seq], batch.pos[seq], batch.n_seq_id[seq] = prompt[step % len(prompt)], \
                    len(prompt) + step, 1
                batch.seq_id[seq][0], batch.logits[seq] = seq, True
            batch.n_tokens = sequences
            if lib.llama_decode(ctx, batch) != 0:
                raise RuntimeError("llama_decode failed")
        return (time.perf_counter() - began) / steps
    finally:
        lib.llama_batch_free(batch)
        lib.llama_free(ctx)
