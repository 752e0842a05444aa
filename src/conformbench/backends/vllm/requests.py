"""A batch of requests through vLLM's ``LLM``: each rendered and tokenized,
its constraint turned into ``StructuredOutputsParams``, then one
``LLM.generate`` call per structured-output backend (beam searches one
``LLM.beam_search`` call each), the results put back in request order.

A result's ``seconds`` is its batch's wall time shared out over the batch's
requests (vLLM decodes them together: no request has a time of its own).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from conformbench.backends.runinfo import LocalCounters
from conformbench.engines.base import CompiledConstraint
from conformbench.engines.vllm_structured import VllmEngine
from conformbench.errors import UsageError
from conformbench.records.generation import Constraint, GenerationRequest, GenerationResult
from conformbench.records.prompt import Prompt

__all__ = ["SAMPLER", "Counters", "Host", "Prepared", "VllmRequests", "check_request"]

#: sampling settings at temperature > 0 (the llama.cpp backend's)
SAMPLER: dict[str, float] = {"top_k": 40, "top_p": 0.95, "min_p": 0.05, "repetition_penalty": 1.0}


@dataclass
class Counters(LocalCounters):
    """The backend's counters, reported in its run metadata."""

    #: times the model was loaded (a second: a request under another structured-output backend)
    loads: int = 0
    batches: int = 0
    beam_generations: int = 0
    structured_backends: list[str] = field(default_factory=list)


class Host(Protocol):
    """What a batch needs of the backend (backend.py's ``VllmBackend``)."""

    counters: Counters
    max_model_len: int

    @property
    def loaded_structured(self) -> str | None: ...

    @property
    def eos_ids(self) -> frozenset[int]: ...

    def llm(self, structured: str) -> Any: ...

    def compile(self, constraint: Constraint) -> tuple[CompiledConstraint, VllmEngine]: ...

    def tokenize_prompt(self, prompt: Prompt) -> list[int]: ...

    def detokenize(self, tokens: list[int]) -> str: ...

#: vLLM's structured-output backend for a batch with no constraint in it, when none is loaded yet
_DEFAULT_STRUCTURED = "xgrammar"


def check_request(request: GenerationRequest) -> None:
    settings = request.settings
    if settings.temperature < 0:
        raise UsageError(f"temperature must be >= 0, not {settings.temperature}")
    if settings.beams > 1 and settings.temperature != 0:
        raise UsageError(f"beam search is deterministic: beams = {settings.beams} needs temperature 0, "
                         f"not {settings.temperature}")


@dataclass
class Prepared:
    """One request ready for vLLM."""

    index: int
    request: GenerationRequest
    tokens: list[int]
    budget: int
    compiled: CompiledConstraint | None
    engine: VllmEngine | None
    fresh: bool

    def blank(self) -> GenerationResult:
        compiled = self.compiled
        return GenerationResult(
            text="", finish_reason="error", prompt_tokens=len(self.tokens),
            engine_input=compiled.engine_input if compiled else None,
            unenforced=compiled.unenforced if compiled else (),
            compile_seconds=compiled.compile_seconds if compiled and self.fresh else 0.0,
            beams=self.request.settings.beams,
        )


class VllmRequests:
    """Runs batches for one ``VllmBackend``."""

    def __init__(self, backend: Host) -> None:
        self.backend = backend

    def run(self, requests: list[GenerationRequest]) -> list[GenerationResult]:
        prepared = [self._prepare(i, r) for i, r in enumerate(requests)]
        results: dict[int, GenerationResult] = {}
        for p in prepared:
            if p.budget <= 0:
                result = p.blank()
                result.error = f"prompt has {len(p.tokens)} tokens; max_model_len is {self.backend.max_model_len}"
                results[p.index] = result
        left = [p for p in prepared if p.index not in results]
        for p in (p for p in left if p.request.settings.beams > 1):
            results[p.index] = self._beam(p)
        plain = [p for p in left if p.request.settings.beams == 1]
        for structured in sorted({p.engine.backend for p in plain if p.engine is not None}):
            results |= self._batch(structured, [p for p in plain if p.engine and p.engine.backend == structured])
        free = [p for p in plain if p.engine is None]
        if free:
            results |= self._batch(self.backend.loaded_structured or _DEFAULT_STRUCTURED, free)
        return [results[i] for i in range(len(requests))]

    def _prepare(self, index: int, request: GenerationRequest) -> Prepared:
        compiled = engine = None
        fresh = False
        if request.constraint is not None:
            before = self.backend.counters.compiles
            compiled, engine = self.backend.compile(request.constraint)
            fresh = self.backend.counters.compiles > before
        tokens = self.backend.tokenize_prompt(request.prompt)
        budget = min(request.settings.max_tokens, self.backend.max_model_len - len(tokens))
        return Prepared(index, request, tokens, budget, compiled, engine, fresh)

    def _batch(self, structured: str, batch: Sequence[Prepared]) -> dict[int, GenerationResult]:
        """One ``LLM.generate`` call; where vLLM refuses the batch, each request alone."""
        llm = self.backend.llm(structured)
        started = time.perf_counter()
        try:
            outputs = llm.generate([{"prompt_token_ids": p.tokens} for p in batch],
                                   [_sampling(p) for p in batch], use_tqdm=False)
        except (ValueError, TypeError, RuntimeError) as exc:
            if len(batch) > 1:
                return {k: v for p in batch for k, v in self._batch(structured, [p]).items()}
            return {batch[0].index: self._refused(batch[0], exc)}
        share = (time.perf_counter() - started) / max(1, len(batch))
        self.backend.counters.batches += 1
        return {p.index: self._result(p, out.outputs[0], share) for p, out in zip(batch, outputs, strict=True)}

    def _refused(self, p: Prepared, exc: Exception) -> GenerationResult:
        """vLLM refused one request: a constraint's refusal is its engine's
        (UnsupportedSchemaError: the unit is excluded with the reason)."""
        first = " ".join(str(exc).split())[:400] or type(exc).__name__
        if p.engine is not None:
            raise p.engine.unsupported(f"vLLM refused the constraint: {first}")
        result = p.blank()
        result.error = f"vLLM refused the request ({type(exc).__name__}): {first}"
        return result

    def _result(self, p: Prepared, out: Any, seconds: float) -> GenerationResult:
        result = p.blank()
        result.text = str(out.text)
        result.finish_reason = "length" if out.finish_reason == "length" else "stop"
        result.completion_tokens = len(out.token_ids)
        result.seconds = seconds
        counters = self.backend.counters
        counters.model_calls += 1
        counters.prompt_tokens_total += len(p.tokens)
        return result

    def _beam(self, p: Prepared) -> GenerationResult:
        """``LLM.beam_search`` for one request (length penalty 1.0); the best sequence."""
        from vllm.sampling_params import BeamSearchParams

        structured = p.engine.backend if p.engine else self.backend.loaded_structured or _DEFAULT_STRUCTURED
        llm = self.backend.llm(structured)
        started = time.perf_counter()
        params = BeamSearchParams(beam_width=p.request.settings.beams, max_tokens=p.budget, length_penalty=1.0,
                                  structured_outputs=_structured(p))
        try:
            (output,) = llm.beam_search([{"prompt_token_ids": p.tokens}], params, use_tqdm=False)
        except (ValueError, TypeError, RuntimeError) as exc:
            return self._refused(p, exc)
        best = output.sequences[0]
        out = [int(t) for t in best.tokens[len(p.tokens):]]
        eos = self.backend.eos_ids
        ended = bool(out) and out[-1] in eos
        result = p.blank()
        text = self.backend.detokenize(out[:-1] if ended else out)
        stop = _first_stop(text, p.request.settings.stop)
        result.text = text if stop is None else text[:stop]
        result.finish_reason = "stop" if ended or stop is not None else "length"
        result.completion_tokens = len(out)
        result.seconds = time.perf_counter() - started
        self.backend.counters.model_calls += 1
        self.backend.counters.beam_generations += 1
        self.backend.counters.prompt_tokens_total += len(p.tokens)
        return result


def _first_stop(text: str, stops: Sequence[str]) -> int | None:
    found = [at for at in (text.find(s) for s in stops if s) if at >= 0]
    return min(found) if found else None


def _sampling(p: Prepared) -> Any:
    """The request's ``SamplingParams``: greedy at temperature 0, else the
    backend's sampler with the request's seed; its constraint as vLLM's
    structured outputs (the schema, or an arm's Lark grammar)."""
    from vllm import SamplingParams

    settings = p.request.settings
    sampler: dict[str, Any] = {"temperature": 0.0}
    if settings.temperature > 0:
        sampler = {"temperature": settings.temperature, "top_k": int(SAMPLER["top_k"]), "top_p": SAMPLER["top_p"],
                   "min_p": SAMPLER["min_p"]}
    return SamplingParams(max_tokens=p.budget, seed=settings.seed, stop=list(settings.stop) or None,
                          structured_outputs=_structured(p), **sampler)


def _structured(p: Prepared) -> Any:
    """The request's constraint as vLLM's ``StructuredOutputsParams`` (None: none)."""
    from vllm.sampling_params import StructuredOutputsParams

    if p.compiled is None or p.request.constraint is None:
        return None
    if p.request.constraint.thinking is not None:  # an arm's Lark grammar: free text, then the schema
        return StructuredOutputsParams(grammar=p.compiled.engine_input)
    return StructuredOutputsParams(json=p.compiled.engine_input)
