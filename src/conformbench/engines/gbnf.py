"""llama.cpp's native grammar sampler, fed by llama-cpp-python's own JSON
Schema to GBNF converter (which has no numeric minimum/maximum, among other
gaps: the keyword probe reports them).

It is slow in llama-cpp-python: the grammar sampler sits in the sampler chain
and is run over the whole vocabulary for every token."""

from __future__ import annotations

from collections.abc import Callable

from conformbench.engines.base import Acceptor, DecodeHooks, Engine, Vocabulary, engines
from conformbench.jsontypes import Schema

__all__ = ["GbnfEngine"]


@engines.register("gbnf")
class GbnfEngine(Engine):
    distribution = "llama-cpp-python"
    module = "llama_cpp"

    def _gbnf(self, text: str) -> str:
        from llama_cpp.llama_grammar import json_schema_to_gbnf

        try:
            return str(json_schema_to_gbnf(text))
        except (RecursionError, MemoryError) as exc:
            raise self.unsupported(f"{type(exc).__name__} while converting") from None
        except Exception as exc:  # noqa: BLE001 - the converter signals gaps with asserts and ValueErrors
            raise self.unsupported(exc) from None

    def _build(
        self, schema: Schema, text: str, vocab: Vocabulary
    ) -> tuple[str, Callable[[int], DecodeHooks]]:
        from llama_cpp.llama_grammar import LlamaGrammar

        gbnf = self._gbnf(text)
        _check_parses(self, gbnf, vocab)
        grammar = LlamaGrammar.from_string(gbnf, verbose=False)
        # llama.cpp builds a fresh grammar state from the text for every
        # generation, so one LlamaGrammar serves them all.
        hooks = DecodeHooks(grammar=grammar)
        return gbnf, lambda _prompt_tokens: hooks

    def _acceptor(self, schema: Schema, text: str, vocab: Vocabulary, timeout_s: float | None) -> Acceptor:
        from conformbench.engines.llama_grammar import GrammarSamplerAcceptor

        gbnf = self._gbnf(text)
        try:
            return GrammarSamplerAcceptor(vocab, gbnf)
        except ValueError:
            raise self.unsupported("llama.cpp could not parse the generated GBNF grammar") from None


def _check_parses(engine: Engine, gbnf: str, vocab: Vocabulary) -> None:
    """llama.cpp parses GBNF only when a generation starts, and a failure
    there leaves a NULL sampler in the chain; parse it now instead."""
    import llama_cpp

    from conformbench.engines.llama_grammar import init_grammar_sampler

    sampler = init_grammar_sampler(vocab, gbnf)
    if not sampler:
        raise engine.unsupported("llama.cpp could not parse the generated GBNF grammar")
    llama_cpp.llama_sampler_free(sampler)
