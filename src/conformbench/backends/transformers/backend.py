"""The Hugging Face transformers backend (``--backend transformers``; the
``[hf]`` extra: torch, transformers, accelerate, gguf).

For the models researchers hold as checkpoints, in the precision a paper
ran them: ``--model`` is a local checkpoint directory or GGUF file (default:
the embedded SmolLM2 GGUF, dequantised by transformers), options
(``BackendConfig.extra``) ``dtype`` (``bf16``, the default as in the
ConCodeEval paper; ``fp32``, ``fp16``), ``device`` (``auto``: cuda when
available, else cpu) and ``chat_template`` (``auto`` | ``none``); threads
set torch's intra-op and inter-op threads. Nothing is fetched from a hub.

Prompts are rendered with the tokenizer's chat template (the GGUF's, for a
GGUF) plus ``assistant_prefix``, and decoded by ``model.generate``: greedy at
temperature 0, otherwise sampling with the llama.cpp backend's fixed
settings (top-k 40, top-p 0.95, min-p 0.05, seeded); ``beams`` N > 1 is
``generate(num_beams=N)`` itself (length_penalty 1.0, early_stopping
False). Constraints come from the engine registry (llguidance, xgrammar,
outlines) as a logits processor keyed by the generated prefix
(``processor.py``), so they survive beam search; gbnf is refused. Stop
strings and the loop stop are a stopping criterion with the llama.cpp
backend's rules, and finish reasons, token counts and the model record are
those of the llama.cpp backend.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from typing import Any, ClassVar

from conformbench.backends.base import backends
from conformbench.backends.constraint_cache import ConstraintCache
from conformbench.backends.manifest import BackendManifest
from conformbench.backends.runinfo import LocalCounters, local_decoding_facts
from conformbench.backends.transformers.attention import capture_attention
from conformbench.backends.transformers.loading import (
    bounded_chat_template,
    checkpoint_digest,
    load_checkpoint,
    parse_options,
    render_chat,
    resolve_checkpoint,
)
from conformbench.backends.transformers.manifest import MANIFEST
from conformbench.backends.transformers.processor import Finish, PrefixMasks, StopRules, stop_at
from conformbench.backends.transformers.vocabulary import HfVocabulary
from conformbench.engines.base import CompiledConstraint
from conformbench.engines.masking import TokenMatcher
from conformbench.engines.thinking_grammar import answer_start, thinking_stop
from conformbench.errors import UsageError
from conformbench.records.generation import (
    BackendConfig,
    Constraint,
    DecodingSettings,
    GenerationRequest,
    GenerationResult,
)
from conformbench.records.prompt import Prompt, raw_prompt_text

__all__ = ["SAMPLER", "TransformersBackend"]

#: sampling settings at temperature > 0 (the llama.cpp backend's)
SAMPLER: dict[str, float] = {"top_k": 40, "top_p": 0.95, "min_p": 0.05, "repetition_penalty": 1.0}
@dataclass
class Counters(LocalCounters):
    """The backend's counters, reported in its run metadata (the llamacpp
    backend's, but for prefix reuse, which generate does not do)."""

    beam_generations: int = 0


@backends.register("transformers")
class TransformersBackend:

    name: ClassVar[str]
    manifest: ClassVar[BackendManifest] = MANIFEST

    def __init__(self, config: BackendConfig) -> None:
        if config.base_url:
            raise UsageError("transformers backend takes no base_url (use the 'openai' backend for servers)")
        self.hf_options = parse_options(config.extra)
        self.config = config
        self.checkpoint = resolve_checkpoint(config.model)
        started = time.perf_counter()
        self._model, self._tokenizer, self.device = load_checkpoint(self.checkpoint, self.hf_options, config.threads)
        self.load_seconds = time.perf_counter() - started
        self.n_ctx = min(config.n_ctx, int(getattr(self._model.config, "max_position_embeddings", config.n_ctx)))
        n_logits = int(self._model.get_output_embeddings().weight.shape[0])
        self.vocabulary = HfVocabulary(self._tokenizer, n_logits, str(self.checkpoint.path))
        self._template = (getattr(self._tokenizer, "chat_template", None)
                          if self.hf_options.chat_template == "auto" else None)
        # the template comes with the checkpoint: rendered in the bounded sandbox
        # (get_chat_template: the one apply_chat_template would pick, a named set's "default" included)
        self._bounded = bounded_chat_template(self._tokenizer.get_chat_template()) if self._template else None
        self.counters = Counters()
        self._constraints = ConstraintCache(self.vocabulary, self.counters)

    # -- prompts -----------------------------------------------------------

    def render_prompt(self, prompt: Prompt) -> str:
        """The exact text the model is given: chat template (with the
        generation prompt) plus ``assistant_prefix``; without a template, the
        message contents separated by blank lines."""
        if not self._template or self._bounded is None:
            return raw_prompt_text(prompt)
        return render_chat(self._bounded, self._tokenizer, prompt)

    def tokenize_prompt(self, prompt: Prompt) -> list[int]:
        # a chat template writes BOS itself; a raw prompt gets the tokenizer's special tokens
        ids = self._tokenizer(self.render_prompt(prompt), add_special_tokens=not self._template)["input_ids"]
        return [int(t) for t in ids]

    def detok(self, out: list[int]) -> str:
        return str(self._tokenizer.decode(out, skip_special_tokens=True, clean_up_tokenization_spaces=False))

    # -- constraints -------------------------------------------------------

    def compile(self, constraint: Constraint) -> tuple[CompiledConstraint, bool]:
        """(compiled constraint, freshly compiled?); cached per engine, answer
        form and exact schema text. Refusals are cached too."""
        if constraint.engine in MANIFEST.refused_engines:
            raise UsageError(f"the transformers backend cannot use engine {constraint.engine!r}: "
                             f"{MANIFEST.refused_engines[constraint.engine]}")
        return self._constraints.compile(constraint)

    def _masks(self, compiled: CompiledConstraint, prompt_len: int, settings: DecodingSettings) -> PrefixMasks:
        def fresh() -> TokenMatcher:
            processor = compiled.start(prompt_len).processor
            if processor is None:
                raise UsageError(f"engine {compiled.engine!r} has no token mask for the transformers backend")
            return processor.matcher

        return PrefixMasks(fresh, prompt_len, self.vocabulary.n_vocab, frozenset({self.vocabulary.eos}),
                           measure=settings.beams == 1)

    # -- generation --------------------------------------------------------

    def generate(self, request: GenerationRequest) -> GenerationResult:
        settings = request.settings
        if settings.temperature < 0:
            raise UsageError(f"temperature must be >= 0, not {settings.temperature}")
        compiled: CompiledConstraint | None = None
        fresh = False
        if request.constraint is not None:
            compiled, fresh = self.compile(request.constraint)
        if settings.beams > 1 and settings.temperature != 0:
            raise UsageError(f"beam search is deterministic: beams = {settings.beams} needs temperature 0, "
                             f"not {settings.temperature}")
        tokens = self.tokenize_prompt(request.prompt)
        result = GenerationResult(
            text="", finish_reason="error", prompt_tokens=len(tokens),
            engine_input=compiled.engine_input if compiled else None,
            unenforced=compiled.unenforced if compiled else (),
            compile_seconds=compiled.compile_seconds if compiled and fresh else 0.0,
        )
        budget = min(settings.max_tokens, self.n_ctx - len(tokens))
        if budget <= 0:
            result.error = f"prompt has {len(tokens)} tokens; n_ctx is {self.n_ctx}"
            return result
        self.counters.model_calls += 1
        self.counters.prompt_tokens_total += len(tokens)
        if settings.attention and request.attend is not None:
            pieces = [self.vocabulary.piece_text(t) for t in tokens]
            result.attention = capture_attention(self._model, pieces, tokens, self.device, request.attend)
        masks = self._masks(compiled, len(tokens), settings) if compiled else None
        return self._run(tokens, settings, budget, masks, result, compiled.engine if compiled else "",
                         thinking_stop(request))

    def _run(self, tokens: list[int], settings: DecodingSettings, budget: int, masks: PrefixMasks | None,
             result: GenerationResult, engine: str, think_stop: str | None = None) -> GenerationResult:
        rules = StopRules(self.detok, len(tokens), settings, budget, self.vocabulary.eog_ids)
        start = time.perf_counter()
        raw = self._generate(tokens, settings, budget, masks, rules)
        result.seconds = time.perf_counter() - start
        out, finish = self._finish(raw, rules)
        if masks is not None:  # a thinking constraint says whether it closed the thinking itself
            state = masks.matcher_after(raw)
            result.think_cut = state.think_cut if state is not None else None
        text = self.detok(out)
        if masks is not None and masks.toll is not None:
            result.mask_toll = masks.toll.record(lambda i: len(self.detok(out[:i])), settings.mask_trace,
                                                 answer_start(text, think_stop))
        cut = stop_at(text, settings.stop) if settings.stop else None
        result.text, result.finish_reason = (text[:cut], "stop") if cut is not None else (text, finish)
        result.completion_tokens = len(out)
        result.beams = settings.beams
        if finish == "loop":
            self.counters.loop_stops += 1
            self.counters.loop_tokens_saved += budget - len(out)
        if masks is not None and (masks.error is not None or not masks.accepted(out)):
            result.finish_reason = "error"
            result.error = f"{engine} stopped masking: {masks.error or 'the output took a refused token'}"
        return result

    def _generate(self, tokens: list[int], settings: DecodingSettings, budget: int,
                  masks: PrefixMasks | None, rules: StopRules) -> list[int]:
        """The generated token ids (end token and padding included)."""
        import torch
        from transformers import LogitsProcessorList, StoppingCriteriaList

        ids = torch.tensor([tokens], device=self.device)
        decoding: dict[str, Any] = {"do_sample": False}
        if settings.temperature > 0:
            torch.manual_seed(settings.seed)
            decoding = {"do_sample": True, "temperature": settings.temperature, **SAMPLER}
        if settings.beams > 1:
            decoding |= {"num_beams": settings.beams, "length_penalty": 1.0, "early_stopping": False}
        with torch.no_grad():
            output = self._model.generate(
                ids, attention_mask=torch.ones_like(ids), max_new_tokens=budget,
                eos_token_id=sorted(self.vocabulary.eog_ids), pad_token_id=self.vocabulary.eos,
                logits_processor=LogitsProcessorList([masks] if masks else []),
                stopping_criteria=StoppingCriteriaList([rules]), **decoding)
        if settings.beams > 1:
            self.counters.beam_generations += 1
        return [int(t) for t in output[0, len(tokens):].tolist()]

    def _finish(self, out: list[int], rules: StopRules) -> tuple[list[int], Finish]:
        """The output up to its end token, and why it ended."""
        eog = self.vocabulary.eog_ids
        end = next((i for i, t in enumerate(out) if t in eog), None)
        text_tokens = out if end is None else out[:end]
        reason = rules.reasons.get(tuple(text_tokens))
        if reason is not None:
            return text_tokens, reason
        return text_tokens, "stop" if end is not None else "length"

    def generate_many(self, requests: list[GenerationRequest]) -> list[GenerationResult]:
        """In the order given, one at a time (a generation is the same
        whatever ran before it)."""
        return [self.generate(r) for r in requests]

    # -- run metadata ------------------------------------------------------

    def metadata(self) -> dict[str, Any]:
        template = self._template if isinstance(self._template, str) else None
        checkpoint = self.checkpoint
        return {
            "backend": self.name,
            "model": self.config.model,
            "model_file": checkpoint.gguf_file or checkpoint.path.name,
            "checkpoint_kind": "gguf" if checkpoint.gguf_file else "directory",
            # the GGUF file's sha256, or a directory's files' (checkpoint_digest)
            "model_sha256": checkpoint_digest(checkpoint),
            "model_name": getattr(self._model.config, "name_or_path", None),
            "model_type": getattr(self._model.config, "model_type", None),
            "dtype": self.hf_options.dtype,
            "device": self.device,
            "attn_implementation": getattr(self._model.config, "_attn_implementation", None),
            "load_seconds": round(self.load_seconds, 3),
            "chat_template": "tokenizer" if template else "none",
            "chat_template_sha256": hashlib.sha256(template.encode()).hexdigest() if template else None,
            "n_ctx": self.n_ctx,
            **_torch_threads(),
            **local_decoding_facts(SAMPLER, self._constraints.engine_versions(), self.counters),
        }

    def close(self) -> None:
        self.vocabulary.close()
        self._constraints.clear()


def _torch_threads() -> dict[str, int]:
    """torch's intra-op and inter-op thread counts (``--threads`` sets both)."""
    import torch

    return {"threads": int(torch.get_num_threads()), "interop_threads": int(torch.get_num_interop_threads())}
