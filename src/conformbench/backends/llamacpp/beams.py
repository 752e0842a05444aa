"""Beam search for the llamacpp backend (``[decoding] beams = N``, N > 1).

Scored as Hugging Face ``generate(num_beams=N)`` does by default
(``BeamSearchScorer`` with ``length_penalty=1.0``, ``early_stopping=False``,
one returned sequence): each step takes the log-softmax of every running
beam's logits (over the whole vocabulary; a grammar's refused tokens are then
set to -inf, as HF's logits processors run after the log-softmax), adds the
beam's running sum, and keeps the top ``max(2, 1 + #eos) * N`` candidates in
order. A candidate ending in an end-of-generation token becomes a finished
hypothesis if it ranks among the first N, scored ``sum / generated_len``
(the end token counted); the others fill the N running beams. When the
search stops is the stop rule's (``beam_rules.py``: by default the installed
transformers' ``generate()``, whose search ends when the best *running*
beam cannot beat the worst of N kept hypotheses; ``beam-search-scorer``, the
backend option ``beam_stop``, is the old 4.x scorer's rule). The best
hypothesis is returned.

The stop rules of greedy decoding (stop strings, the loop stop, the budget)
end a beam as a finished hypothesis with that finish reason (as
transformers' stopping criteria do), so the returned beam carries the reason
it ended with. Two departures from HF, both invisible in the returned text: a
candidate at -inf (every continuation refused by the grammar) is dropped
instead of kept at -inf, and ties between equal scores go to the lower
(beam, token) index.

The beams share the prompt's KV cells: the prompt is evaluated once into
sequence 0 of a context of its own (``kv_unified``: a sequence copy only tags
cells, 0.03 ms), each step's children are copied from their parents
(``llama_memory_seq_cp``) into the other half of 2N sequence ids and the
parents removed, and the N next tokens are decoded in one batch, each row's
logits read with ``llama_get_logits_ith``. Each beam carries its own
constraint state: a matcher with a ``fork()`` (llguidance: ``deep_copy``)
is copied, any other (outlines, xgrammar) is rebuilt by replaying the
beam's tokens through a fresh matcher of the same compiled constraint.
GBNF grammars run inside llama.cpp's sampler, one state per ``Llama``:
refused.
"""

from __future__ import annotations

import ctypes
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import numpy.typing as npt

from conformbench.backends.llamacpp.beam_rules import (
    DEFAULT_STOP_RULE,
    STOP_RULES,
    Candidate,
    Hypotheses,
    split_step,
    stop_now,
)
from conformbench.backends.llamacpp.manifest import beams_refusal
from conformbench.errors import BackendError, UsageError

if TYPE_CHECKING:
    from conformbench.backends.llamacpp.host import Finish
    from conformbench.engines.base import CompiledConstraint
    from conformbench.engines.masking import TokenMatcher
    from conformbench.records.generation import GenerationRequest, GenerationResult

__all__ = ["STOP_RULES", "BeamOutcome", "BeamSearch", "Hypotheses", "beam_generate", "beams_refusal", "stop_rule_option"]

FloatArray = npt.NDArray[np.float32]


class BeamHost(Protocol):
    """What the search uses of the backend."""

    @property
    def llama(self) -> Any: ...

    def end_after(self, out: list[int], prompt_tokens: list[int], settings: Any,
                  budget: int) -> Finish | None: ...

    def finish_text(self, out: list[int], prompt_tokens: list[int], stops: tuple[str, ...],
                    finish: Finish) -> tuple[str, Finish]: ...


@dataclass
class _Beam:
    tokens: list[int]
    score: float  # sum of the log-probabilities of ``tokens``
    seq: int
    matcher: TokenMatcher | None = None


@dataclass
class BeamOutcome:
    tokens: list[int]
    finish: Finish
    #: the returned hypothesis' score (sum of log-probabilities / length)
    score: float
    #: decoding steps taken
    steps: int
    error: str | None = None


class BeamSearch:
    """Beam search on the model of a backend's ``Llama`` (a context of its own)."""

    def __init__(self, host: BeamHost, beams: int, rule: str = DEFAULT_STOP_RULE) -> None:
        import llama_cpp

        self._lib = llama_cpp
        self._host = host
        self.beams = beams
        #: the stop rule (``beam_rules.STOP_RULES``)
        self.rule = stop_rule_option(rule)
        llm = host.llama
        self._vocab = llama_cpp.llama_model_get_vocab(llm.model)
        self.n_vocab = int(llama_cpp.llama_vocab_n_tokens(self._vocab))
        self._eog = np.array([t for t in range(self.n_vocab) if llama_cpp.llama_vocab_is_eog(self._vocab, t)])
        self._ctx: Any = None
        self._cells = 0
        self._n_batch = int(llm.n_batch)
        self._batch = llama_cpp.llama_batch_init(max(self._n_batch, 2 * beams), 0, 1)
        self._bitmask = np.zeros((1, (self.n_vocab + 31) // 32), dtype=np.int32)
        self._last_row = 0
        #: generations decoded and steps taken (the backend's metadata)
        self.generations = 0
        self.steps = 0

    def _context(self, cells: int) -> Any:
        """A context with 2N sequences sharing one KV store of ``cells``."""
        if self._ctx is not None and cells <= self._cells:
            return self._ctx
        self.close_context()
        lib, llm = self._lib, self._host.llama
        params = lib.llama_context_params.from_buffer_copy(llm.context_params)
        params.n_seq_max = 2 * self.beams
        params.n_ctx = self._cells = -(-cells // 256) * 256
        params.kv_unified = True
        ctx = lib.llama_init_from_model(llm.model, params)
        if ctx is None:
            raise BackendError("llama.cpp could not create a beam-search context")
        self._ctx = ctx
        return ctx

    def decode(self, prompt: list[int], settings: Any, budget: int,
               fresh: Callable[[], TokenMatcher] | None) -> BeamOutcome:
        """The best hypothesis for ``prompt``; ``fresh`` makes the pristine
        matcher of the request's mask constraint (None: unconstrained)."""
        n = self.beams
        ctx = self._context(len(prompt) + n * budget + 2 * n)
        mem = self._lib.llama_get_memory(ctx)
        self._lib.llama_memory_clear(mem, True)
        self._prefill(ctx, prompt)
        running = [_Beam([], 0.0, 0, fresh() if fresh else None)]
        rows = [self._last_row]
        hyps = Hypotheses(n)
        keep = max(2, 1 + len(self._eog)) * n
        steps = 0
        free_half = 1
        while running:
            steps += 1
            cands = self._candidates(ctx, running, rows, keep)
            if not cands:
                break
            chosen = self._select(cands, running, hyps, steps, (prompt, settings, budget))
            if stop_now(self.rule, hyps, cands, chosen, steps):
                break
            children = self._children(chosen, running, fresh, (prompt, settings, budget), hyps, free_half)
            for beam in running:
                self._lib.llama_memory_seq_rm(mem, beam.seq, -1, -1)
            running = children
            if running:
                rows = self._step(ctx, running, len(prompt))
            free_half = 1 - free_half
        self.generations += 1
        self.steps += steps
        best = hyps.best()
        if best is None:
            return BeamOutcome([], "stop", float("-inf"), steps, "the grammar allows no token on any beam")
        return BeamOutcome(best.tokens, best.finish, best.score, steps)

    def _prefill(self, ctx: Any, prompt: list[int]) -> None:
        batch = self._batch
        for start in range(0, len(prompt), self._n_batch):
            chunk = prompt[start:start + self._n_batch]
            for i, tok in enumerate(chunk):
                self._put(i, tok, start + i, 0, start + i == len(prompt) - 1)
            batch.n_tokens = len(chunk)
            self._decode(ctx)
        self._last_row = (len(prompt) - 1) % self._n_batch

    def _put(self, i: int, token: int, pos: int, seq: int, logits: bool) -> None:
        batch = self._batch
        batch.token[i] = token
        batch.pos[i] = pos
        batch.n_seq_id[i] = 1
        batch.seq_id[i][0] = seq
        batch.logits[i] = logits

    def _decode(self, ctx: Any) -> None:
        rc = self._lib.llama_decode(ctx, self._batch)
        if rc != 0:
            raise BackendError(f"llama_decode failed with code {rc} during beam search")

    def _step(self, ctx: Any, running: list[_Beam], prompt_len: int) -> list[int]:
        for i, beam in enumerate(running):
            self._put(i, beam.tokens[-1], prompt_len + len(beam.tokens) - 1, beam.seq, True)
        self._batch.n_tokens = len(running)
        self._decode(ctx)
        return list(range(len(running)))

    def _logprobs(self, ctx: Any, row: int, matcher: TokenMatcher | None) -> FloatArray:
        ptr = self._lib.llama_get_logits_ith(ctx, row)
        logits = np.ctypeslib.as_array(ctypes.cast(ptr, ctypes.POINTER(ctypes.c_float)), shape=(self.n_vocab,))
        shifted = logits - logits.max()
        out: FloatArray = (shifted - np.log(np.exp(shifted).sum())).astype(np.float32)
        if matcher is not None:
            from conformbench.engines.masking import unpack_bitmask

            self._bitmask.fill(0)
            matcher.fill_bitmask(self._bitmask)
            out = np.where(unpack_bitmask(self._bitmask, self.n_vocab), out, np.float32(-np.inf))
        return out

    def _candidates(self, ctx: Any, running: list[_Beam], rows: list[int],
                    keep: int) -> list[Candidate]:
        """(beam index, token, summed score) of the ``keep`` best finite
        continuations, best first; ties to the lower flat index."""
        scores = np.stack([self._logprobs(ctx, row, b.matcher) + np.float32(b.score)
                           for b, row in zip(running, rows, strict=True)])
        flat = scores.reshape(-1)
        top = np.argpartition(-flat, min(keep, flat.size - 1))[:keep] if flat.size > keep else np.arange(flat.size)
        order = sorted(top.tolist(), key=lambda i: (-flat[i], i))
        return [(i // self.n_vocab, i % self.n_vocab, float(flat[i])) for i in order if np.isfinite(flat[i])]

    def _select(self, cands: list[Candidate], running: list[_Beam], hyps: Hypotheses, cur_len: int,
                stops: tuple[list[int], Any, int]) -> list[Candidate]:
        """The step's finished candidates become hypotheses (``split_step``:
        end tokens, and under the transformers rule the other stop rules, among
        the first N); returns the candidates that run on."""
        eog = set(self._eog.tolist())

        def hit(cand: Candidate) -> Finish | None:
            return self._host.end_after([*running[cand[0]].tokens, cand[1]], *stops)

        finished, chosen = split_step(self.rule, cands, self.beams, eog.__contains__, hit)
        for (b, tok, score), why in finished:
            tokens = running[b].tokens if why == "stop" and tok in eog else [*running[b].tokens, tok]
            hyps.add(list(tokens), score, cur_len, why)
        return chosen

    def _children(self, chosen: list[Candidate], running: list[_Beam], fresh: Callable[[], TokenMatcher] | None,
                  stops: tuple[list[int], Any, int], hyps: Hypotheses, half: int) -> list[_Beam]:
        """The next running beams (KV copied from their parents); under the
        beam-search-scorer rule a beam a stop rule ends becomes a hypothesis
        with that finish reason (the transformers rule has ended those already)."""
        mem = self._lib.llama_get_memory(self._ctx)
        out: list[_Beam] = []
        for j, (b, tok, score) in enumerate(chosen):
            parent = running[b]
            tokens = [*parent.tokens, tok]
            matcher = _fork(parent.matcher, fresh, parent.tokens)
            if matcher is not None:
                try:
                    matcher.advance([tok])
                except ValueError:
                    continue  # the engine refused its own mask: the beam ends here
            ended = self._host.end_after(tokens, *stops) if self.rule == "beam-search-scorer" else None
            if ended is not None:
                hyps.add(tokens, score, len(tokens), ended)
                continue
            seq = half * self.beams + j
            self._lib.llama_memory_seq_cp(mem, parent.seq, seq, -1, -1)
            out.append(_Beam(tokens, score, seq, matcher))
        return out

    def close_context(self) -> None:
        if self._ctx is not None:
            self._lib.llama_free(self._ctx)
            self._ctx = None

    def close(self) -> None:
        self.close_context()
        if self._batch is not None:
            self._lib.llama_batch_free(self._batch)
            self._batch = None


def stop_rule_option(value: object) -> str:
    """The backend option ``beam_stop`` checked (UsageError naming the rules)."""
    if not isinstance(value, str) or value not in STOP_RULES:
        raise UsageError(f"beam_stop must be one of {sorted(STOP_RULES)}, not {value!r}")
    return value


def _fork(matcher: TokenMatcher | None, fresh: Callable[[], TokenMatcher] | None,
          tokens: list[int]) -> TokenMatcher | None:
    """A copy of a beam's constraint state for one of its children."""
    if matcher is None or fresh is None:
        return None
    copied = matcher.fork()
    if copied is not None:
        return copied
    rebuilt = fresh()
    if tokens:
        rebuilt.advance(list(tokens))
    return rebuilt



def beam_generate(search: BeamSearch, host: BeamHost, request: GenerationRequest,
                  compiled: CompiledConstraint | None, tokens: list[int], budget: int,
                  result: GenerationResult) -> GenerationResult:
    """``result`` filled by a beam search of ``request`` (the backend has
    compiled its constraint and tokenized its prompt)."""
    settings = request.settings
    why = beams_refusal(settings.beams, settings.temperature, compiled.engine if compiled else None)
    if why is not None:
        raise UsageError(why)
    fresh: Callable[[], TokenMatcher] | None = None
    if compiled is not None:
        start_of = compiled.start

        def fresh() -> TokenMatcher:
            processor = start_of(len(tokens)).processor
            if processor is None:
                raise UsageError(f"beams > 1 needs a mask engine; {compiled.engine!r} has none")
            return processor.matcher

    started = time.perf_counter()
    out = search.decode(tokens, settings, budget, fresh)
    result.seconds = time.perf_counter() - started
    result.text, result.finish_reason = host.finish_text(out.tokens, tokens, settings.stop, out.finish)
    result.completion_tokens = len(out.tokens)
    result.beams = search.beams
    if out.error is not None:
        result.finish_reason = "error"
        result.error = out.error
    return result
