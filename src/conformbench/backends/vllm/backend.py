"""vLLM in process (``--backend vllm``; the ``[vllm]`` extra, installed in a
venv of its own: docs/runtime.md).

``--model`` is a Hugging Face folder (vLLM reads no GGUF here: the embedded
model is converted with ``conformbench.backends.transformers.hf_folder``).
The model's chat template renders each prompt (in the bounded sandbox, as
the transformers backend renders it) plus ``assistant_prefix``; the token
ids go to ``LLM.generate`` in batches of ``vllm_batch`` requests, which vLLM
schedules together, and the results come back in request order. Greedy at
temperature 0, otherwise sampling with the llama.cpp backend's settings
(top-k 40, top-p 0.95, min-p 0.05, the request's seed); ``beams`` N > 1 is
``LLM.beam_search`` (length penalty 1.0; vLLM 0.32 constrains its beams too).

Constraints are vLLM's own structured outputs (``StructuredOutputsParams``:
the schema as JSON, or an arm's Lark grammar), under the engine the request
names (``vllm:xgrammar``, ``vllm:guidance``, ``vllm:outlines``:
engines/vllm_structured.py). vLLM fixes its structured-output backend when
the engine is built, so the model loads at the first request, under its
engine; a request naming another one reloads it (counted in ``loads``).
A schema vLLM refuses is the engine's refusal (an exclusion, as elsewhere).
vLLM decodes in its own loop: no loop stop, and stop strings are vLLM's.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path
from typing import Any, ClassVar, cast

from conformbench.backends.base import backends
from conformbench.backends.manifest import BackendManifest
from conformbench.backends.runinfo import local_decoding_facts
from conformbench.backends.transformers.loading import (
    Checkpoint,
    bounded_chat_template,
    checkpoint_digest,
    refuse_remote_code,
    render_chat,
)
from conformbench.backends.vllm.manifest import DEFAULT_BATCH, MANIFEST, VLLM_ENGINES, vllm_release
from conformbench.backends.vllm.requests import SAMPLER, Counters, VllmRequests, check_request
from conformbench.engines.base import CompiledConstraint, Vocabulary, engines
from conformbench.engines.vllm_structured import VllmEngine
from conformbench.errors import UnsupportedSchemaError, UsageError
from conformbench.records.generation import BackendConfig, Constraint, GenerationRequest, GenerationResult
from conformbench.records.prompt import Prompt, raw_prompt_text

__all__ = ["SAMPLER", "VllmBackend", "model_folder"]

#: GiB of KV cache vLLM's CPU build reserves unless the environment says otherwise (its default is far more)
KV_CACHE_GIB = "1"


def model_folder(model: str | None) -> Checkpoint:
    """The Hugging Face folder ``--model`` names, checked: a directory with
    a ``config.json`` and no code of its own (one line otherwise)."""
    if model is None:
        raise UsageError("the vllm backend needs --model DIR, a Hugging Face folder: convert the embedded model "
                         "with conformbench.backends.transformers.hf_folder.export_hf_folder (docs/runtime.md)")
    path = Path(model).expanduser()
    if not path.is_dir() or not (path / "config.json").is_file():
        raise UsageError(f"--model {model}: the vllm backend takes a Hugging Face folder (a directory with "
                         "config.json); a GGUF converts with conformbench.backends.transformers.hf_folder")
    refuse_remote_code(path)
    return Checkpoint(path)


@backends.register("vllm")
class VllmBackend:

    name: ClassVar[str]
    manifest: ClassVar[BackendManifest] = MANIFEST

    def __init__(self, config: BackendConfig) -> None:
        if config.base_url:
            raise UsageError("vllm backend takes no base_url: it runs vLLM in this process (a vLLM server is "
                             "the openai backend's: --backend openai --base-url URL)")
        os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", KV_CACHE_GIB)
        os.environ.setdefault("VLLM_LOGGING_LEVEL", "WARNING")  # its INFO lines would bury the progress bar
        if vllm_release() is None:
            raise UsageError("the vllm backend needs vLLM: pip install 'conformbench[vllm]' in a venv of its own "
                             "(docs/runtime.md)")
        self.config = config
        self.checkpoint = model_folder(config.model)
        self.extra = dict(config.extra)
        self._tokenizer = _tokenizer(self.checkpoint.path)
        source = getattr(self._tokenizer, "chat_template", None)
        self._template = source if isinstance(source, str) else None
        self._bounded = bounded_chat_template(self._template) if self._template else None
        self.max_model_len = int(self.extra.get("max_model_len", config.n_ctx))
        self.counters = Counters()
        self._llm: Any = None
        self._structured: str | None = None
        self.load_seconds = 0.0
        self._compiled: dict[tuple[str, str, str, str], CompiledConstraint | UnsupportedSchemaError] = {}
        self._requests = VllmRequests(self)

    # -- the engine ----------------------------------------------------------

    def llm(self, structured: str) -> Any:
        """vLLM's ``LLM`` with structured-output backend ``structured``,
        loaded now where it is not (or under another backend)."""
        if self._llm is not None and self._structured == structured:
            return self._llm
        self._shutdown()
        from vllm import LLM

        started = time.perf_counter()
        options = {"tensor_parallel_size": int(self.extra.get("tensor_parallel_size", 1)),
                   "dtype": str(self.extra.get("dtype", "bfloat16")), "max_model_len": self.max_model_len,
                   "seed": int(self.extra.get("seed", 0)), "enforce_eager": self.eager}
        if "gpu_memory_utilization" in self.extra:
            options["gpu_memory_utilization"] = float(self.extra["gpu_memory_utilization"])
        try:
            self._llm = LLM(model=str(self.checkpoint.path), trust_remote_code=False,
                            structured_outputs_config={"backend": structured}, **options)
        except (ValueError, RuntimeError, OSError) as exc:
            first = " ".join(str(exc).split())[:300]
            raise UsageError(f"vLLM could not load {self.checkpoint.path} ({type(exc).__name__}): {first}") from None
        self._structured = structured
        self.load_seconds += time.perf_counter() - started
        self.counters.loads += 1
        if structured not in self.counters.structured_backends:
            self.counters.structured_backends.append(structured)
        return self._llm

    @property
    def loaded_structured(self) -> str | None:
        """The structured-output backend of the loaded engine (None: none loaded)."""
        return self._structured

    def _shutdown(self) -> None:
        """Stop vLLM's engine (an idle one busy-polls part of a core)."""
        llm, self._llm, self._structured = self._llm, None, None
        if llm is None:
            return
        engine = getattr(llm, "llm_engine", None)
        core = getattr(engine, "engine_core", None)
        stop = getattr(core, "shutdown", None)
        if callable(stop):
            stop()
        del llm
        import gc

        gc.collect()

    # -- prompts -------------------------------------------------------------

    def render_prompt(self, prompt: Prompt) -> str:
        """The exact text the model is given: the chat template (with the
        generation prompt) plus ``assistant_prefix``; without a template, the
        message contents separated by blank lines."""
        if self._bounded is None:
            return raw_prompt_text(prompt)
        return render_chat(self._bounded, self._tokenizer, prompt)

    def tokenize_prompt(self, prompt: Prompt) -> list[int]:
        # a chat template writes BOS itself (as vLLM's chat endpoint tokenizes)
        ids = self._tokenizer(self.render_prompt(prompt), add_special_tokens=self._bounded is None)["input_ids"]
        return [int(t) for t in ids]

    @property
    def eos_ids(self) -> frozenset[int]:
        """The tokenizer's end token and the folder's generation config's (vLLM stops at both)."""
        own = self._tokenizer.eos_token_id
        return frozenset({*([int(own)] if own is not None else []), *_generation_eos(self.checkpoint.path)})

    def detokenize(self, tokens: list[int]) -> str:
        return str(self._tokenizer.decode(tokens, skip_special_tokens=True, clean_up_tokenization_spaces=False))

    # -- constraints ---------------------------------------------------------

    def compile(self, constraint: Constraint) -> tuple[CompiledConstraint, VllmEngine]:
        """What vLLM is given for ``constraint``, and its engine; cached
        (refusals too). UnsupportedSchemaError for a constraint vLLM's
        engine cannot take; UsageError for an engine of another backend."""
        if constraint.engine not in VLLM_ENGINES:
            raise UsageError(f"the vllm backend cannot use engine {constraint.engine!r}: "
                             f"{MANIFEST.refused_engines.get(constraint.engine, 'not one of vLLM')}")
        engine = cast(VllmEngine, engines.get(constraint.engine)())
        stop = constraint.thinking.stop if constraint.thinking else ""
        key = (constraint.engine, constraint.output_format, stop, _schema_key(constraint))
        found = self._compiled.get(key)
        if found is None:
            try:  # vLLM compiles for its own tokenizer: the engines here need no vocabulary
                found = engine.compile(constraint.schema, cast(Vocabulary, None), constraint.output_format,
                                       constraint.thinking)
                self.counters.compiles += 1
            except UnsupportedSchemaError as exc:
                found = exc
            self._compiled[key] = found
        else:
            self.counters.compile_cache_hits += 1
        if isinstance(found, UnsupportedSchemaError):
            raise found
        return found, engine

    # -- generation ----------------------------------------------------------

    def generate(self, request: GenerationRequest) -> GenerationResult:
        return self.generate_many([request])[0]

    def generate_many(self, requests: list[GenerationRequest]) -> list[GenerationResult]:
        """In request order: the batch is handed to vLLM at once (per
        structured-output backend, beam searches apart)."""
        for request in requests:
            check_request(request)
        return self._requests.run(requests)

    @property
    def eager(self) -> bool:
        """Whether vLLM runs the model eagerly (``enforce_eager``), without torch.compile."""
        return bool(self.extra.get("enforce_eager", False))

    @property
    def sequences_together(self) -> int:
        """Requests handed to vLLM at once (``vllm_batch``)."""
        return int(self.extra.get("vllm_batch", DEFAULT_BATCH))

    # -- run metadata --------------------------------------------------------

    def metadata(self) -> dict[str, Any]:
        return {
            "backend": self.name,
            "model": self.config.model,
            "model_file": self.checkpoint.path.name,
            "checkpoint_kind": "directory",
            "model_sha256": checkpoint_digest(self.checkpoint),
            "vllm_version": vllm_release(),
            "structured_outputs_backend": self._structured,
            "dtype": str(self.extra.get("dtype", "bfloat16")),
            "max_model_len": self.max_model_len,
            "tensor_parallel_size": int(self.extra.get("tensor_parallel_size", 1)),
            "enforce_eager": self.eager,
            "vllm_batch": self.sequences_together,
            "kv_cache_gib": os.environ.get("VLLM_CPU_KVCACHE_SPACE"),
            "load_seconds": round(self.load_seconds, 3),
            "chat_template": "tokenizer" if self._template else "none",
            "chat_template_sha256": hashlib.sha256(self._template.encode()).hexdigest() if self._template else None,
            **local_decoding_facts(SAMPLER, {name: engines.get(name)().version() for name in VLLM_ENGINES},
                                   self.counters),
            "loop_stop": {"supported": False, "why": "vLLM decodes in its own loop"},
        }

    def close(self) -> None:
        self._shutdown()
        self._compiled.clear()


def _schema_key(constraint: Constraint) -> str:
    import json

    return json.dumps(constraint.schema, ensure_ascii=False)


def _generation_eos(folder: Path) -> set[int]:
    """``eos_token_id`` of the folder's generation_config.json (a number or a list)."""
    import json

    try:
        table = json.loads((folder / "generation_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    value = table.get("eos_token_id") if isinstance(table, dict) else None
    values = value if isinstance(value, list) else [value]
    return {int(v) for v in values if isinstance(v, int) and not isinstance(v, bool)}


def _tokenizer(folder: Path) -> Any:
    """The folder's tokenizer (transformers, which vLLM depends on)."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(str(folder), local_files_only=True, trust_remote_code=False)
    except Exception as exc:  # noqa: BLE001 - a foreign folder: any failure is the user's file
        first = " ".join(str(exc).split())[:300]
        raise UsageError(f"cannot read the tokenizer of {folder} ({type(exc).__name__}): {first}") from None
