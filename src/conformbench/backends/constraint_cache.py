"""The compiled constraints of a local backend (llama.cpp, transformers):
one engine instance per name, one compilation per engine, answer form and
exact schema text, refusals cached like successes (a schema an engine
cannot compile is refused again without compiling it again)."""

from __future__ import annotations

from typing import Protocol

from conformbench.backends.thinking_budget import with_thinking
from conformbench.engines.base import CompiledConstraint, Engine, Vocabulary, engines, schema_text
from conformbench.errors import UnsupportedSchemaError, UsageError
from conformbench.records.generation import Constraint, Thinking

__all__ = ["CompileCounters", "ConstraintCache"]


class CompileCounters(Protocol):
    """The two counters of a backend's run metadata the cache keeps."""

    compiles: int
    compile_cache_hits: int


class ConstraintCache:
    def __init__(self, vocabulary: Vocabulary, counters: CompileCounters) -> None:
        self._vocabulary = vocabulary
        self._counters = counters
        #: engine name -> its instance (the run metadata reads their versions)
        self.engines: dict[str, Engine] = {}
        self._compiled: dict[tuple[str, str, str, Thinking | None],
                             CompiledConstraint | UnsupportedSchemaError] = {}

    def compile(self, constraint: Constraint) -> tuple[CompiledConstraint, bool]:
        """(compiled constraint, freshly compiled?); the engine's
        UnsupportedSchemaError, from the cache too, when it refuses."""
        if constraint.engine == "server":
            raise UsageError("engine 'server' means server-side decoding: use the 'openai' backend")
        key = (constraint.engine, constraint.output_format, schema_text(constraint.schema), constraint.thinking)
        cached = self._compiled.get(key)
        fresh = cached is None
        if cached is None:
            engine = self.engines.get(constraint.engine)
            if engine is None:
                engine = self.engines[constraint.engine] = engines.get(constraint.engine)()
            try:
                cached = engine.compile(constraint.schema, self._vocabulary, constraint.output_format,
                                        constraint.thinking)
                if constraint.thinking is not None:
                    cached = with_thinking(cached, constraint.thinking, self._vocabulary)
            except UnsupportedSchemaError as exc:
                cached = exc
            self._compiled[key] = cached
            self._counters.compiles += 1
        else:
            self._counters.compile_cache_hits += 1
        if isinstance(cached, UnsupportedSchemaError):
            raise cached
        return cached, fresh

    def engine_versions(self) -> dict[str, str | None]:
        """The version of every engine used so far, by name (run metadata)."""
        return {name: engine.version() for name, engine in sorted(self.engines.items())}

    def clear(self) -> None:
        self._compiled.clear()
