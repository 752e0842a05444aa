"""The constraint-engine interface and its registry.

An engine turns a JSON Schema into something one llama.cpp runtime can apply
while decoding: a GBNF grammar handed to llama.cpp's sampler, or a token mask
computed per step by a matcher and applied in a logits processor. Engines
validate nothing: constrained output is always validated against the full
schema afterwards, because engines drop keywords silently.
"""

from __future__ import annotations

import ctypes
import importlib.metadata
import importlib.util
import json
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from conformbench.errors import UnsupportedSchemaError, UsageError
from conformbench.jsontypes import Schema
from conformbench.registry import Registry

if TYPE_CHECKING:
    from llama_cpp import Llama
    from llama_cpp.llama_grammar import LlamaGrammar

    from conformbench.engines.masking import MaskProcessor

__all__ = [
    "CompiledConstraint",
    "DecodeHooks",
    "Engine",
    "LlamaRuntime",
    "engines",
    "schema_text",
]

T = TypeVar("T")


def schema_text(schema: Schema) -> str:
    """The schema's exact JSON text, key order kept: property order is part of
    the contract ({"reasoning", "answer"} must be generated reasoning first),
    so it is never sorted, not even for cache keys."""
    return json.dumps(schema, ensure_ascii=False)


@dataclass
class LlamaRuntime:
    """What an engine may use of one loaded llama.cpp model. Expensive derived
    objects (the vocabulary as bytes, an engine's tokenizer) are built once
    per model and kept here."""

    llm: Llama
    #: identity of the model for caches and messages (its file path)
    key: str
    _memo: dict[str, Any] = field(default_factory=dict, repr=False)

    @cached_property
    def vocab(self) -> Any:
        import llama_cpp

        return llama_cpp.llama_model_get_vocab(self.llm.model)

    @cached_property
    def n_vocab(self) -> int:
        import llama_cpp

        return int(llama_cpp.llama_vocab_n_tokens(self.vocab))

    @cached_property
    def eos(self) -> int:
        return int(self.llm.token_eos())

    @cached_property
    def eog_ids(self) -> frozenset[int]:
        """Every end-of-generation token (EOS, end-of-turn...)."""
        import llama_cpp

        return frozenset(
            i for i in range(self.n_vocab) if llama_cpp.llama_vocab_is_eog(self.vocab, i)
        )

    @cached_property
    def token_pieces(self) -> list[bytes | None]:
        """The raw bytes each token id decodes to; None for control tokens
        (BOS, chat markers...), which never belong inside JSON."""
        import llama_cpp

        size = 256
        buf = ctypes.create_string_buffer(size)
        out: list[bytes | None] = []
        for tok in range(self.n_vocab):
            attr = llama_cpp.llama_vocab_get_attr(self.vocab, tok)
            if attr & llama_cpp.LLAMA_TOKEN_ATTR_CONTROL:
                out.append(None)
                continue
            n = llama_cpp.llama_token_to_piece(self.vocab, tok, buf, size, 0, False)
            if n < 0:  # longer than the buffer: retry with the size asked for
                big = ctypes.create_string_buffer(-n)
                n = llama_cpp.llama_token_to_piece(self.vocab, tok, big, -n, 0, False)
                out.append(big.raw[:n])
            else:
                out.append(buf.raw[:n])
        return out

    def memo(self, key: str, factory: Callable[[], T]) -> T:
        """Build ``factory()`` once per runtime under ``key``; a value with a
        ``close()`` method is closed with the runtime."""
        if key not in self._memo:
            self._memo[key] = factory()
        value: T = self._memo[key]
        return value

    def close(self) -> None:
        """Release what engines keep for this model (worker processes...)."""
        for value in self._memo.values():
            close = getattr(value, "close", None)
            if callable(close):
                close()
        self._memo.clear()


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


class Engine(ABC):
    """A constraint engine. Subclasses set ``name`` and ``distribution`` and
    implement ``_build``; ``compile`` adds timing and the availability check."""

    name: ClassVar[str]
    #: the PyPI distribution providing the engine (for versions and messages)
    distribution: ClassVar[str]
    #: the module whose presence means the engine is installed
    module: ClassVar[str]
    install_hint: ClassVar[str] = ""

    def availability(self) -> str | None:
        """None when usable, else why not (one line)."""
        if importlib.util.find_spec(self.module) is None:
            hint = self.install_hint or f"pip install {self.distribution}"
            return f"{self.distribution} is not installed ({hint})"
        return None

    def version(self) -> str | None:
        try:
            return importlib.metadata.version(self.distribution)
        except importlib.metadata.PackageNotFoundError:
            return None

    def compile(self, schema: Schema, runtime: LlamaRuntime) -> CompiledConstraint:
        """Compile ``schema`` for ``runtime``'s model. Raises UsageError when the
        engine is not installed and UnsupportedSchemaError (with the engine's
        own reason) when it cannot compile this schema."""
        missing = self.availability()
        if missing is not None:
            raise UsageError(f"engine {self.name!r} is unavailable: {missing}")
        start = time.perf_counter()
        engine_input, factory = self._build(schema, schema_text(schema), runtime)
        return CompiledConstraint(
            engine=self.name,
            engine_input=engine_input,
            compile_seconds=time.perf_counter() - start,
            start=factory,
        )

    @abstractmethod
    def _build(
        self, schema: Schema, text: str, runtime: LlamaRuntime
    ) -> tuple[str, Callable[[int], DecodeHooks]]:
        """(engine_input, per-generation hooks factory) for this schema."""

    def unsupported(self, reason: object) -> UnsupportedSchemaError:
        """The error for a schema this engine refuses; keeps one line."""
        first = " ".join(str(reason).split())
        return UnsupportedSchemaError(self.name, first[:500] or "no reason given")


engines: Registry[type[Engine]] = Registry("engine", "conformbench.engines")
