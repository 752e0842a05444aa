"""Continuous batching for the llamacpp backend (``extra = {batched = S}``).

Requests that are unconstrained, constrained by a mask engine (llguidance,
outlines, xgrammar: a ``MaskProcessor``) or by a GBNF grammar go through
``BatchedDecoder``: up to S sequences per ``llama_decode``, each with its own
seq id, KV stream and constraint state, a finished sequence's slot refilled
at once, a prompt prefix shared by sequences in flight evaluated once (K
samples of an item, arms with a common preamble), the llguidance masks of a
step filled in one parallel call. Greedy unconstrained and mask-engine
sequences take the argmax; sampled (temperature > 0) and GBNF sequences get
the sampler chain ``Llama.generate`` would build for them (``SAMPLER``,
their seed, their grammar), so a sample draws what it would draw alone.
Beams and attention capture stay sequential (their own decoders).

The stop rules are the sequential decoder's, in its order (stop strings,
budget, loop stop), and the text is cut the same way. What may still differ
is llama.cpp's arithmetic: a token decoded in a batch of several sequences
does not always get bit-identical logits to the same token decoded alone, so
a near-tie can flip a choice (benchmarks/batched.py and sequences.py measure
the identical-output rate). That is why this is off by default.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from conformbench.backends.llamacpp.batch_decoder import (
    BatchedConfig,
    BatchedDecoder,
    Finish,
    SequenceRequest,
    SequenceResult,
)
from conformbench.backends.llamacpp.host import SAMPLER
from conformbench.backends.llamacpp.manifest import MANIFEST
from conformbench.backends.llamacpp.next_token import SamplerChain
from conformbench.backends.llamacpp.token_masks import MatcherMask
from conformbench.errors import UnsupportedSchemaError
from conformbench.records.generation import GenerationRequest, GenerationResult

if TYPE_CHECKING:
    from conformbench.backends.llamacpp.host import DecoderHost
    from conformbench.engines.base import CompiledConstraint, DecodeHooks
    from conformbench.engines.toll_meter import TollMeter

__all__ = ["BatchedGenerations", "batched_option"]


def batched_option(value: object) -> int:
    """The ``batched`` option: sequences per decode, 0 (the default) = off,
    checked as the manifest declares it (type and range)."""
    option = next(o for o in MANIFEST.options if o.name == "batched")
    return int(option.validate(value, "batched"))


@dataclass
class _Prepared:
    index: int
    tokens: list[int]
    compiled: CompiledConstraint | None
    fresh: bool
    budget: int


class BatchedGenerations:
    """The batched path of one backend (its decoder made on first use)."""

    def __init__(self, backend: DecoderHost, sequences: int) -> None:
        self._backend = backend
        self.sequences = sequences
        self._decoder: BatchedDecoder | None = None
        #: generations decoded batched (the rest of the backend's were sequential)
        self.generations = 0

    def batchable(self, request: GenerationRequest) -> bool:
        """Unconstrained, or under a mask engine or GBNF (compiled here);
        not a thinking constraint (its cut is read from the sequential decoder)."""
        if request.constraint is None:
            return True
        if request.constraint.thinking is not None:
            return False
        try:
            compiled, _ = self._backend.compile(request.constraint)
        except UnsupportedSchemaError:
            return False  # the sequential path raises it, as without batching
        hooks = compiled.start(0)
        return hooks.processor is not None or hooks.grammar is not None

    def generate(self, requests: list[GenerationRequest]) -> list[GenerationResult]:
        """Results in request order (all requests must be ``batchable``)."""
        prepared = [self._prepare(i, r) for i, r in enumerate(requests)]
        results: dict[int, GenerationResult] = {}
        todo = [p for p in prepared if p.budget > 0]
        for p in prepared:
            if p.budget <= 0:
                results[p.index] = self._too_long(p)
        seqs = [self._sequence(requests[p.index], p) for p in todo]
        for p, seq, out in zip(todo, seqs, self._decoder_for().generate(seqs), strict=True):
            results[p.index] = self._result(requests[p.index], p, out, seq.toll)
        self.generations += len(todo)
        return [results[i] for i in range(len(requests))]

    @property
    def prefix_tokens_shared(self) -> int:
        """Prompt tokens copied from another sequence instead of evaluated."""
        return self._decoder.prefix_tokens_shared if self._decoder is not None else 0

    def _decoder_for(self) -> BatchedDecoder:
        if self._decoder is None:
            llm = self._backend.vocabulary.llm
            self._decoder = BatchedDecoder(llm, BatchedConfig(
                max_sequences=self.sequences, ctx_per_sequence=llm.n_ctx(),
                batch_tokens=max(llm.n_batch, self.sequences), threads=self._backend.config.threads))
        return self._decoder

    def _prepare(self, index: int, request: GenerationRequest) -> _Prepared:
        backend = self._backend
        compiled, fresh = backend.compile(request.constraint) if request.constraint else (None, False)
        tokens = backend.tokenize_prompt(request.prompt)
        n_ctx = backend.vocabulary.llm.n_ctx()
        return _Prepared(index, tokens, compiled, fresh, min(request.settings.max_tokens, n_ctx - len(tokens)))

    def _sequence(self, request: GenerationRequest, p: _Prepared) -> SequenceRequest:
        mask = toll = None
        hooks = p.compiled.start(len(p.tokens)) if p.compiled is not None else None
        if hooks is not None and hooks.processor is not None:
            mask = MatcherMask(hooks.processor.matcher, self._decoder_for().n_vocab)
            toll = hooks.processor.toll
        return SequenceRequest(tuple(p.tokens), p.budget, mask, self._check(request, p),
                               self._sampler(request, hooks), toll)

    def _sampler(self, request: GenerationRequest, hooks: DecodeHooks | None) -> Callable[[], SamplerChain] | None:
        """The chain ``Llama.generate`` builds for this request (None: argmax,
        what its greedy chain without a grammar picks)."""
        temperature, seed = request.settings.temperature, request.settings.seed
        grammar = hooks.grammar if hooks is not None else None
        if temperature == 0 and grammar is None:
            return None
        llm = self._backend.vocabulary.llm

        def make() -> SamplerChain:
            # Llama.generate's own chain builder (llama-cpp-python is pinned):
            # the same samplers in the same order, seeded as set_seed does
            llm.set_seed(seed)
            chain: SamplerChain = llm._init_sampler(
                temp=temperature, grammar=grammar, top_k=int(SAMPLER["top_k"]), top_p=SAMPLER["top_p"],
                min_p=SAMPLER["min_p"], repeat_penalty=SAMPLER["repeat_penalty"])
            return chain

        return make

    def _check(self, request: GenerationRequest, p: _Prepared) -> Callable[[list[int]], Finish | None]:
        """The sequential decoder's stop rules, in its order."""
        settings, backend = request.settings, self._backend

        def check(out: list[int]) -> Finish | None:
            return backend.end_after(out, p.tokens, settings, p.budget)

        return check

    def _base(self, p: _Prepared) -> GenerationResult:
        compiled = p.compiled
        self._backend.counters.model_calls += 1
        self._backend.counters.prompt_tokens_total += len(p.tokens)
        return GenerationResult(
            text="", finish_reason="error", prompt_tokens=len(p.tokens),
            engine_input=compiled.engine_input if compiled else None,
            unenforced=compiled.unenforced if compiled else (),
            compile_seconds=compiled.compile_seconds if compiled and p.fresh else 0.0,
        )

    def _too_long(self, p: _Prepared) -> GenerationResult:
        result = self._base(p)
        n_ctx = self._backend.vocabulary.llm.n_ctx()
        result.error = f"prompt has {len(p.tokens)} tokens; n_ctx is {n_ctx}"
        return result

    def _result(self, request: GenerationRequest, p: _Prepared, out: SequenceResult,
                toll: TollMeter | None) -> GenerationResult:
        result = self._base(p)
        if toll is not None:
            result.mask_toll = toll.record(self._backend.char_of(out.tokens, p.tokens), request.settings.mask_trace)
        result.seconds = out.seconds
        result.completion_tokens = len(out.tokens)
        finish = "length" if out.finish_reason == "error" else out.finish_reason
        result.text, result.finish_reason = self._backend.finish_text(
            out.tokens, p.tokens, request.settings.stop, finish)
        if out.finish_reason == "error":  # as sequential: the text so far, an error
            result.finish_reason = "error"
            result.error = f"{p.compiled.engine if p.compiled else '?'} stopped masking: {out.error}"
        return result

    def close(self) -> None:
        if self._decoder is not None:
            self._decoder.close()
            self._decoder = None
