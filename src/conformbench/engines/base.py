"""The constraint-engine interface and its registry.

An engine turns a JSON Schema, for one model vocabulary, into something a
decoder can apply: a GBNF grammar handed to llama.cpp's sampler, or a token mask
computed per step by a matcher and applied in a logits processor. Engines
validate nothing: constrained output is always validated against the full
schema afterwards, because engines drop keywords silently.
"""

from __future__ import annotations

import json
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

from conformbench.errors import UnsupportedSchemaError, UsageError
from conformbench.jsontypes import Schema
from conformbench.records.generation import Thinking
from conformbench.records.spec import SERVER_ENGINE
from conformbench.registry import Registry, distribution_version, module_installed

if TYPE_CHECKING:
    from llama_cpp.llama_grammar import LlamaGrammar

    from conformbench.engines.masking import MaskProcessor

__all__ = [
    "Acceptor",
    "Built",
    "CompiledConstraint",
    "DecodeHooks",
    "Engine",
    "Vocabulary",
    "Walk",
    "engines",
    "form_refusal",
    "schema_text",
    "seconds_of",
    "time_masks",
]

T = TypeVar("T")


def schema_text(schema: Schema) -> str:
    """The schema's exact JSON text, key order kept: property order is part of
    the contract ({"reasoning", "answer"} must be generated reasoning first),
    so it is never sorted, not even for cache keys."""
    return json.dumps(schema, ensure_ascii=False)


class Vocabulary(Protocol):
    """What an engine may use of a model: its tokens, not its weights.

    The llama.cpp backend's loaded model provides one
    (``conformbench.backends.llamacpp.vocabulary.LlamaVocabulary``), and so does a
    vocabulary-only load of a GGUF file, so engines compile and are checked
    without a model. Expensive derived objects (an engine's tokenizer) are
    built once per vocabulary with ``memo``."""

    #: identity of the vocabulary for caches and messages (the model file path)
    key: str

    @property
    def n_vocab(self) -> int: ...

    @property
    def eos(self) -> int: ...

    @property
    def eog_ids(self) -> frozenset[int]:
        """Every end-of-generation token (EOS, end-of-turn...)."""
        ...

    @property
    def token_pieces(self) -> list[bytes | None]:
        """The raw bytes each token id decodes to; None for control tokens."""
        ...

    @property
    def llama_vocab(self) -> Any:
        """llama.cpp's ``llama_vocab`` handle (engines built on llama.cpp's
        own grammar sampler or vocabulary bridge need it)."""
        ...

    def tokenize(self, text: str) -> list[int]:
        """Token ids of ``text`` (no BOS, special tokens not parsed)."""
        ...

    def memo(self, key: str, factory: Callable[[], T]) -> T: ...


@dataclass(frozen=True)
class DecodeHooks:
    """How one generation applies a constraint: a GBNF grammar for llama.cpp's
    own sampler, or a fresh mask processor (one per generation: it holds the
    matcher's state)."""

    grammar: LlamaGrammar | None = None
    processor: MaskProcessor | None = None


@dataclass(frozen=True)
class CompiledConstraint:
    """A schema compiled by one engine for one model, reusable across
    generations; ``start(prompt_tokens)`` gives the hooks of one generation."""

    engine: str
    #: exactly what the engine was given or produced (GBNF text, llguidance
    #: grammar JSON, outlines regex), recorded in the replay
    engine_input: str
    compile_seconds: float
    start: Callable[[int], DecodeHooks]
    #: what the engine compiled but does not enforce (llguidance's lenient
    #: mode: 'Unimplemented keys: ["uniqueItems"]'); the validator still checks it
    unenforced: tuple[str, ...] = ()


@dataclass(frozen=True)
class Built:
    """What ``Engine._build`` returns when it has more to say than the
    (engine_input, hooks factory) pair: the keywords it did not enforce."""

    engine_input: str
    start: Callable[[int], DecodeHooks]
    unenforced: tuple[str, ...] = ()


@dataclass(frozen=True)
class Walk:
    """Where a token sequence went in a compiled grammar."""

    #: every token was allowed and the grammar may end after the last one
    accepted: bool
    #: tokens allowed before the first refused one (all of them when none was)
    consumed: int


def seconds_of(action: Callable[[], object]) -> float:
    """Wall seconds of one call of ``action``."""
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def time_masks(tokens: Sequence[int], positions: Sequence[int], mask_seconds: Callable[[], float],
               advance: Callable[[int], bool]) -> list[float]:
    """The walk behind every ``Acceptor.mask_seconds``: at each position in
    ``positions`` (after ``tokens[:p]``) take ``mask_seconds()`` (the engine
    times its own full-mask computation), then ``advance`` by the next token;
    stop once every position is timed or where ``advance`` refuses a token."""
    wanted = sorted(set(positions))
    out: list[float] = []
    for i in range(len(tokens) + 1):
        if len(out) < len(wanted) and wanted[len(out)] == i:
            out.append(mask_seconds())
        if i == len(tokens) or len(out) == len(wanted) or not advance(tokens[i]):
            break
    return out


class Acceptor(Protocol):
    """A schema compiled by an engine exactly as for decoding, driven without
    a model: token ids go through the engine's own matcher state by state.
    Each call starts from the grammar's initial state. ``close`` releases
    native resources (an acceptor is used by one thread)."""

    def walk(self, tokens: Sequence[int]) -> Walk:
        """Feed ``tokens`` in order; stop at the first one the grammar refuses."""
        ...

    def mask_seconds(self, tokens: Sequence[int], positions: Sequence[int]) -> list[float]:
        """Seconds to compute the full next-token mask (what decoding pays per
        token) after ``tokens[:p]``, for each p in ascending ``positions``;
        stops early (shorter list) where the grammar refuses a token."""
        ...

    def close(self) -> None: ...


class Engine(ABC):
    """A constraint engine. Subclasses set ``name`` and ``distribution`` and
    implement ``_build``; ``compile`` adds timing and the availability check."""

    name: ClassVar[str]
    #: the PyPI distribution providing the engine (for versions and messages)
    distribution: ClassVar[str]
    #: the module whose presence means the engine is installed
    module: ClassVar[str]
    install_hint: ClassVar[str] = ""
    #: JSON Schema drafts the engine documents support for
    json_schema_drafts: ClassVar[tuple[str, ...]] = ("2020-12",)
    #: answer forms the engine can force (output format names): the user
    #: picks the engine, a cell's output format picks the form. Forms other
    #: than JSON are built by ``_build_form``.
    output_forms: ClassVar[tuple[str, ...]] = ("json",)
    #: lets free text run before the answer in one call (``Thinking``):
    #: needs a grammar with a free-text rule ended by a stop string
    thinks: ClassVar[bool] = False
    #: can be driven without a model (``acceptor``): a default ``engines check``
    #: walks only these (an engine that lives inside a backend, vllm's, cannot)
    model_free: ClassVar[bool] = True

    @classmethod
    def form_refusal(cls, output_format: str) -> str | None:
        """Why this engine cannot constrain ``output_format`` answers (None
        when it can)."""
        if output_format in cls.output_forms:
            return None
        return (f"engine {cls.name!r} constrains only {', '.join(cls.output_forms)} output, "
                f"not {output_format} (its grammar is built from JSON Schema for JSON text)")

    #: the distributions whose version is the engine's, the first installed
    #: one's (empty: ``distribution``)
    version_distributions: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def missing_note(cls) -> str:
        """What ``availability`` says when ``module`` is not installed."""
        hint = cls.install_hint or f"pip install {cls.distribution}"
        return f"{cls.distribution} is not installed ({hint})"

    def availability(self) -> str | None:
        """None when usable, else why not (one line)."""
        return None if module_installed(self.module, self._distributions()) else self.missing_note()

    def version(self) -> str | None:
        return distribution_version(self._distributions())

    @classmethod
    def _distributions(cls) -> tuple[str, ...]:
        return cls.version_distributions or (cls.distribution,)

    def compile(self, schema: Schema, vocab: Vocabulary, output_format: str = "json",
                thinking: Thinking | None = None) -> CompiledConstraint:
        """Compile ``schema`` for ``vocab``'s model, forcing answers written in
        ``output_format`` (after free text, with ``thinking``). Raises
        UsageError when the engine is not installed and UnsupportedSchemaError
        (with the engine's own reason) when it cannot compile this schema or
        constrain this form."""
        missing = self.availability()
        if missing is not None:
            raise UsageError(f"engine {self.name!r} is unavailable: {missing}")
        refusal = self.form_refusal(output_format)
        if refusal is not None:
            raise self.unsupported(refusal)
        if thinking is not None and (not self.thinks or output_format != "json"):
            raise self.unsupported(f"engine {self.name!r} cannot let free text run before a JSON answer "
                                   "(think_then_constrain needs engine llguidance)")
        start = time.perf_counter()
        built: tuple[str, Callable[[int], DecodeHooks]] | Built
        if thinking is not None:
            built = self._build_thinking(schema, thinking, vocab)
        elif output_format == "json":
            built = self._build(schema, schema_text(schema), vocab)
        else:
            built = self._build_form(schema, output_format, vocab)
        if not isinstance(built, Built):
            built = Built(*built)
        return CompiledConstraint(
            engine=self.name,
            engine_input=built.engine_input,
            compile_seconds=time.perf_counter() - start,
            start=built.start,
            unenforced=built.unenforced,
        )

    def acceptor(self, schema: Schema, vocab: Vocabulary, timeout_s: float | None = None) -> Acceptor:
        """``schema`` compiled as ``compile`` compiles it, as an Acceptor for
        model-free checks. Raises like ``compile``. ``timeout_s`` bounds the
        compile where the engine can stop it (outlines' index build); None
        keeps the engine's own limit."""
        missing = self.availability()
        if missing is not None:
            raise UsageError(f"engine {self.name!r} is unavailable: {missing}")
        return self._acceptor(schema, schema_text(schema), vocab, timeout_s)

    def _acceptor(self, schema: Schema, text: str, vocab: Vocabulary, timeout_s: float | None) -> Acceptor:
        raise UsageError(f"engine {self.name!r} cannot be driven without a model (it has no acceptor)")

    @abstractmethod
    def _build(
        self, schema: Schema, text: str, vocab: Vocabulary
    ) -> tuple[str, Callable[[int], DecodeHooks]] | Built:
        """(engine_input, per-generation hooks factory) for this schema, or a
        ``Built`` that also lists what the engine does not enforce."""

    def _build_form(self, schema: Schema, output_format: str, vocab: Vocabulary) -> Built:
        """The constraint of a form other than JSON (one of ``output_forms``)."""
        raise self.unsupported(self.form_refusal(output_format) or f"no {output_format} grammar")

    def _build_thinking(self, schema: Schema, thinking: Thinking, vocab: Vocabulary) -> Built:
        """Free text up to ``thinking.stop``, then a JSON answer (``thinks`` engines)."""
        raise self.unsupported(f"engine {self.name!r} has no free-text rule")

    def unsupported(self, reason: object) -> UnsupportedSchemaError:
        """The error for a schema this engine refuses; keeps one line."""
        first = " ".join(str(reason).split())
        return UnsupportedSchemaError(self.name, first[:500] or "no reason given")


engines: Registry[type[Engine]] = Registry("engine", {
    "gbnf": "conformbench.engines.gbnf",
    "llguidance": "conformbench.engines.llguidance_engine",
    "outlines": "conformbench.engines.outlines_engine",
    "xgrammar": "conformbench.engines.xgrammar_engine",
    "vllm:xgrammar": "conformbench.engines.vllm_structured",
    "vllm:guidance": "conformbench.engines.vllm_structured",
    "vllm:outlines": "conformbench.engines.vllm_structured",
})


def form_refusal(engine: str, output_format: str) -> str | None:
    """Why ``engine`` (a registered engine, or "server") cannot constrain
    answers in ``output_format``; None when it can. Server-side decoding is
    handed a JSON Schema, so it forces JSON only. Unknown engine names fail
    with a did-you-mean."""
    if engine == SERVER_ENGINE:
        if output_format == "json":
            return None
        return f"server-side decoding constrains only json output, not {output_format}"
    return engines.get(engine).form_refusal(output_format)
