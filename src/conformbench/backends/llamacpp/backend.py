"""The llama.cpp backend (llama-cpp-python), the default.

One ``Llama`` object decodes one sequence at a time. Prompts are rendered to
text with the GGUF's chat template (or concatenated as a raw completion
prompt for base models without one), tokenized, and decoded through
``Llama.generate`` so llama.cpp's KV-cache prefix matching applies: prompts
that share a prefix with the previous one (same system prompt, same shots)
only evaluate the rest. Constraints come from the engine registry, compiled
once per (engine, schema text).

Reuse must not change what the model writes. llama.cpp's CPU kernels give
bit-identical results for a token whether it is evaluated in a batch of 2 or
of 500 tokens, but not when it is evaluated alone (measured: logits differ by
up to 0.4, enough to flip a greedy choice). So the reusable prefix is cut to
(see ``reusable_prefix``): only tokens of the previous prompt (generated
tokens were evaluated one at a time), at least two tokens left to evaluate,
and for prompts longer than one batch a multiple of the batch size, so the
batches are those of a fresh evaluation. A generation is then the same
whatever ran before it, so paired arms differ only by what they should.

Options (``BackendConfig.extra``; others are rejected): ``chat_template``
("auto" | "none"), ``prefix_reuse`` (bool, default true; false evaluates
every prompt whole, for measuring what reuse saves: benchmarks/kv_reuse.py)
``batched`` (sequences decoded together, default 0 = off: continuous
batching, ``backends.llamacpp.continuous_batching``; it can change a greedy output, so it is not
on by default) and ``fast_forward`` (bool, default false: tokens a mask
engine forces are appended without sampling steps, ``backends.llamacpp.fast_forward``;
off by default for the same reason). The replay's model record says which were on (``speedups``).
``beam_stop`` ("transformers", the default, or "beam-search-scorer": when
beam search stops, beam_rules.py) is recorded with the beam search's counters.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import asdict
from typing import Any, ClassVar, Literal

from conformbench.backends.base import backends
from conformbench.backends.chat_template import bounded_llama_formatter
from conformbench.backends.constraint_cache import ConstraintCache
from conformbench.backends.llamacpp.amx import loading_for_this_build
from conformbench.backends.llamacpp.beam_rules import DEFAULT_STOP_RULE
from conformbench.backends.llamacpp.beams import stop_rule_option
from conformbench.backends.llamacpp.continuous_batching import BatchedGenerations, batched_option
from conformbench.backends.llamacpp.fast_forward import ForwardCounters, forward_decode
from conformbench.backends.llamacpp.host import SAMPLER, Counters, stop_at
from conformbench.backends.llamacpp.instruments import Instruments
from conformbench.backends.llamacpp.manifest import MANIFEST
from conformbench.backends.llamacpp.template_free import llama_class
from conformbench.backends.llamacpp.vocabulary import LlamaVocabulary, detokenize
from conformbench.backends.locate import resolve_model
from conformbench.backends.loops import loop_check_due, loop_period
from conformbench.backends.manifest import BackendManifest
from conformbench.backends.runinfo import local_decoding_facts
from conformbench.engines.base import (
    CompiledConstraint,
    DecodeHooks,
)
from conformbench.engines.thinking_grammar import answer_start, thinking_stop
from conformbench.errors import UsageError
from conformbench.files import file_sha256
from conformbench.records.generation import (
    BackendConfig,
    Constraint,
    DecodingSettings,
    GenerationRequest,
    GenerationResult,
)
from conformbench.records.prompt import Prompt, raw_prompt_text

__all__ = ["LlamaCppBackend", "reusable_prefix"]

_EXTRA_KEYS = {"chat_template", "prefix_reuse", "batched", "fast_forward", "beam_stop"}


def _load_llama(path: str, n_ctx: int, threads: int | None) -> Any:
    Llama = llama_class()  # compiles none of the file's chat templates (template_free.py)

    try:
        with loading_for_this_build():  # AMX kernels off where they crash (amx.py)
            return Llama(
                model_path=path,
                n_ctx=n_ctx,
                n_threads=threads,
                n_threads_batch=threads,
                seed=0,
                verbose=False,
            )
    except (ValueError, RuntimeError, OSError) as exc:
        raise UsageError(f"llama.cpp cannot load {path} (corrupt or unsupported GGUF): {exc}") from None


@backends.register("llamacpp")
class LlamaCppBackend:

    name: ClassVar[str]
    manifest: ClassVar[BackendManifest] = MANIFEST
    #: when a list, the plain decoder appends the clock (perf_counter) at each
    #: token it samples: ``engines cost`` times TTFT and TPOT from it
    token_clock: list[float] | None = None

    def __init__(self, config: BackendConfig) -> None:
        unknown = sorted(set(config.extra) - _EXTRA_KEYS)
        if unknown:
            raise UsageError(f"llamacpp backend: unknown option(s) {unknown}; known: {sorted(_EXTRA_KEYS)}")
        if config.base_url:
            raise UsageError("llamacpp backend takes no base_url (use the 'openai' backend for servers)")
        template_mode = config.extra.get("chat_template", "auto")
        if template_mode not in ("auto", "none"):
            raise UsageError(f"chat_template must be 'auto' or 'none', not {template_mode!r}")
        prefix_reuse = config.extra.get("prefix_reuse", True)
        if not isinstance(prefix_reuse, bool):
            raise UsageError(f"prefix_reuse must be true or false, not {prefix_reuse!r}")
        self.prefix_reuse = prefix_reuse
        fast_forward = config.extra.get("fast_forward", False)
        if not isinstance(fast_forward, bool):
            raise UsageError(f"fast_forward must be true or false, not {fast_forward!r}")
        #: grammar fast-forward counters, None when off (``backends.llamacpp.fast_forward``)
        self.forward = ForwardCounters() if fast_forward else None
        sequences = batched_option(config.extra.get("batched", 0))
        beam_stop = stop_rule_option(config.extra.get("beam_stop", DEFAULT_STOP_RULE))
        self.config = config
        self.model_path = resolve_model(config.model)
        self._llm = _load_llama(str(self.model_path), config.n_ctx, config.threads)
        self.vocabulary = LlamaVocabulary(self._llm, str(self.model_path))
        self._template = self._chat_template() if template_mode == "auto" else None
        self.counters = Counters()
        self._constraints = ConstraintCache(self.vocabulary, self.counters)
        #: the prompt whose KV entries are in the cache (generated tokens are not counted)
        self._cached_prompt: list[int] = []
        self.batched = BatchedGenerations(self, sequences) if sequences else None
        #: beam search and the attention probe, made when a request asks
        self.instruments = Instruments(self, beam_stop)

    # -- prompts -----------------------------------------------------------

    def _chat_template(self) -> Any:
        template = self._llm.metadata.get("tokenizer.chat_template")
        if not template:
            return None

        def token_text(tok: int) -> str:
            return "" if tok < 0 else str(self._llm._model.token_get_text(tok))

        # the template comes with the model file: compiled and rendered in the
        # bounded sandbox (set up as llama-cpp-python's), never its plain one
        return bounded_llama_formatter(template, token_text(self._llm.token_eos()), token_text(self._llm.token_bos()))

    def render_prompt(self, prompt: Prompt) -> str:
        """The exact text the model is given: chat template (with the
        generation prompt) plus ``assistant_prefix``; without a template, the
        message contents separated by blank lines."""
        if self._template is None:
            return raw_prompt_text(prompt)
        messages = [{"role": m.role, "content": m.content} for m in prompt.messages]
        try:
            rendered = self._template(messages=messages).prompt
        except Exception as exc:  # noqa: BLE001 - template errors come from jinja2 and raise_exception
            raise UsageError(f"the model's chat template rejected the prompt: {exc}") from None
        return str(rendered) + prompt.assistant_prefix

    def tokenize_prompt(self, prompt: Prompt) -> list[int]:
        text = self.render_prompt(prompt).encode("utf-8")
        # A chat template writes BOS itself (if the model wants one); a raw
        # prompt gets the model's own special tokens.
        raw = self._template is None
        return list(self._llm.tokenize(text, add_bos=raw, special=not raw))

    # -- constraints -------------------------------------------------------

    def compile(self, constraint: Constraint) -> tuple[CompiledConstraint, bool]:
        """(compiled constraint, freshly compiled?); cached per engine, answer
        form and exact schema text. Refusals are cached too."""
        return self._constraints.compile(constraint)

    # -- generation --------------------------------------------------------

    def generate(self, request: GenerationRequest) -> GenerationResult:
        settings = request.settings
        if settings.temperature < 0:
            raise UsageError(f"temperature must be >= 0, not {settings.temperature}")
        compiled: CompiledConstraint | None = None
        fresh = False
        if request.constraint is not None:
            compiled, fresh = self.compile(request.constraint)
        tokens = self.tokenize_prompt(request.prompt)
        result = GenerationResult(
            text="",
            finish_reason="error",
            prompt_tokens=len(tokens),
            engine_input=compiled.engine_input if compiled else None,
            unenforced=compiled.unenforced if compiled else (),
            compile_seconds=compiled.compile_seconds if compiled and fresh else 0.0,
        )
        budget = min(settings.max_tokens, self._llm.n_ctx() - len(tokens))
        if budget <= 0:
            result.error = f"prompt has {len(tokens)} tokens; n_ctx is {self._llm.n_ctx()}"
            return result
        if Instruments.asked(request):
            done = self.instruments.generate(request, compiled, tokens, budget, result)
            if done is not None:
                return done
        hooks = compiled.start(len(tokens)) if compiled else DecodeHooks()
        start = time.perf_counter()
        out, finish = self._decode(tokens, settings, hooks, budget)
        result.seconds = time.perf_counter() - start
        result.text, finish = self.finish_text(out, tokens, settings.stop, finish)
        result.completion_tokens = len(out)
        result.finish_reason = finish
        if hooks.processor is not None:  # a thinking constraint says whether it closed the thinking itself
            result.think_cut = hooks.processor.matcher.think_cut
            result.mask_toll = hooks.processor.toll.record(
                self.char_of(out, tokens), settings.mask_trace, answer_start(result.text, thinking_stop(request)))
        if hooks.processor is not None and hooks.processor.error is not None:
            result.finish_reason = "error"
            result.error = f"{compiled.engine if compiled else '?'} stopped masking: {hooks.processor.error}"
        return result

    @property
    def llama(self) -> Any:
        """The ``llama_cpp.Llama`` (the fast-forward decoder drives it)."""
        return self._llm

    def reuse_prefix(self, tokens: list[int]) -> int:
        """Keep the reusable part of the cached prompt in the KV cache (see
        ``reusable_prefix``) and count it; the index evaluation starts from."""
        llm = self._llm
        reuse = reusable_prefix(self._cached_prompt, tokens, llm.n_batch) if self.prefix_reuse else 0
        # Llama.generate matches its own token history against the prompt;
        # cutting that history to ``reuse`` makes it reuse exactly that much.
        llm.n_tokens = min(llm.n_tokens, reuse)
        self._cached_prompt = list(tokens)
        self.counters.prefix_tokens_reused += reuse
        self.counters.prompt_tokens_total += len(tokens)
        self.counters.model_calls += 1
        return int(llm.n_tokens)

    def _decode(
        self, tokens: list[int], settings: DecodingSettings, hooks: DecodeHooks, budget: int
    ) -> tuple[list[int], Literal["stop", "length", "loop"]]:
        from llama_cpp import LogitsProcessorList

        processor = hooks.processor
        if self.forward is not None and processor is not None and processor.can_force \
                and settings.temperature == 0:
            return forward_decode(self, tokens, settings, processor, budget, self.forward)
        llm = self._llm
        self.reuse_prefix(tokens)
        llm.set_seed(settings.seed)
        processors = LogitsProcessorList([hooks.processor]) if hooks.processor else None
        stream = llm.generate(
            tokens,
            temp=settings.temperature,
            logits_processor=processors,
            grammar=hooks.grammar,
            **SAMPLER,
        )
        out: list[int] = []
        finish: Literal["stop", "length", "loop"] = "length"
        eog = self.vocabulary.eog_ids
        for tok in stream:
            if self.token_clock is not None:
                self.token_clock.append(time.perf_counter())
            if tok in eog:
                finish = "stop"
                break
            out.append(tok)
            ended = self.end_after(out, tokens, settings, budget)
            if ended is not None:
                finish = ended
                break
        stream.close()
        return out, finish

    def end_after(self, out: list[int], prompt_tokens: list[int], settings: DecodingSettings,
                  budget: int) -> Literal["stop", "length", "loop"] | None:
        """Every decoder's stop rules after a token is added to ``out``, in
        one order: a stop string, then a loop (checked on its cadence and on
        the budget's last token), then the budget."""
        if settings.stop and self.stop_in(out, prompt_tokens, settings.stop):
            return "stop"
        if (settings.loop_stop and loop_check_due(len(out), budget)
                and loop_period(self.detok(out, prompt_tokens))):
            self.counters.loop_stops += 1
            self.counters.loop_tokens_saved += budget - len(out)
            return "loop"
        if len(out) >= budget:
            return "length"
        return None

    def stop_in(self, out: list[int], prompt_tokens: list[int], stops: tuple[str, ...]) -> bool:
        """Whether the text of ``out`` holds one of ``stops``."""
        return stop_at(self.detok(out, prompt_tokens), stops) is not None

    def detok(self, out: list[int], prompt_tokens: list[int]) -> str:
        # every piece in full (llama-cpp-python's detokenize drops pieces over 32 bytes)
        return detokenize(self._llm, out).decode("utf-8", errors="replace")

    def char_of(self, out: list[int], prompt_tokens: list[int]) -> Callable[[int], int]:
        """The character offset of output token ``i`` in the text of ``out``."""
        return lambda i: len(self.detok(out[:i], prompt_tokens))

    def finish_text(
        self,
        out: list[int],
        prompt_tokens: list[int],
        stops: tuple[str, ...],
        finish: Literal["stop", "length", "loop"],
    ) -> tuple[str, Literal["stop", "length", "loop"]]:
        text = self.detok(out, prompt_tokens)
        cut = stop_at(text, stops) if stops else None
        if cut is not None:
            return text[:cut], "stop"
        return text, finish

    def generate_many(self, requests: list[GenerationRequest]) -> list[GenerationResult]:
        """In the order given. Sequential by default: consecutive prompts
        sharing a prefix reuse the KV cache (reordering could raise reuse but
        would tie results to the batch composition). With ``batched`` on, the
        greedy requests it can take decode together (``backends.llamacpp.continuous_batching``)."""
        if self.batched is None:
            return [self.generate(r) for r in requests]
        together = [i for i, r in enumerate(requests)
                    if not Instruments.asked(r) and self.batched.batchable(r)]
        results: dict[int, GenerationResult] = dict(
            zip(together, self.batched.generate([requests[i] for i in together]), strict=True))
        for i, request in enumerate(requests):
            if i not in results:
                results[i] = self.generate(request)
        return [results[i] for i in range(len(requests))]

    @property
    def sequences_together(self) -> int:
        """Sequences decoded in one step (``batched``; 1 when it is off)."""
        return self.batched.sequences if self.batched else 1

    # -- run metadata ------------------------------------------------------

    def metadata(self) -> dict[str, Any]:
        template = self._llm.metadata.get("tokenizer.chat_template")
        return {
            "backend": self.name,
            "model": self.config.model,
            "model_file": self.model_path.name,
            "model_sha256": file_sha256(self.model_path),
            "model_bytes": self.model_path.stat().st_size,
            "model_name": self._llm.metadata.get("general.name"),
            "chat_template": "gguf" if self._template is not None else "none",
            "prefix_reuse": self.prefix_reuse,
            # which speed-ups were on: prefix reuse (outputs unchanged), and
            # continuous batching (off by default: llama.cpp's batched
            # arithmetic can flip a greedy near-tie)
            "speedups": {"prefix_reuse": self.prefix_reuse,
                         "batched_sequences": self.batched.sequences if self.batched else 0,
                         "batched_generations": self.batched.generations if self.batched else 0,
                         "batched_prefix_tokens_shared": self.batched.prefix_tokens_shared if self.batched else 0,
                         "fast_forward": asdict(self.forward) if self.forward else False},
            "chat_template_sha256": (
                hashlib.sha256(template.encode()).hexdigest() if self._template and template else None
            ),
            "n_ctx": self._llm.n_ctx(),
            # generating and reading prompts (llama-cpp-python's defaults: half the cores, every core)
            "threads": self._llm.n_threads,
            "threads_batch": self._llm.n_threads_batch,
            **local_decoding_facts(SAMPLER, self._constraints.engine_versions(), self.counters),
            **self.instruments.metadata(),
        }

    def close(self) -> None:
        if self.batched is not None:
            self.batched.close()
        self.instruments.close()
        self.vocabulary.close()
        self._llm.close()


def reusable_prefix(cached: list[int], tokens: list[int], n_batch: int) -> int:
    """How many leading prompt tokens may come from the KV cache without
    changing the result (see the module docstring): within the common prefix
    of the cached prompt, leaving at least 2 tokens to evaluate, and aligned
    to ``n_batch`` when the prompt needs more than one batch."""
    common = 0
    for a, b in zip(cached, tokens):
        if a != b:
            break
        common += 1
    reuse = max(0, min(common, len(tokens) - 2))
    if len(tokens) > n_batch:
        reuse -= reuse % n_batch
    return reuse
