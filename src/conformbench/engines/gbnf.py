"""llama.cpp's native grammar sampler, fed by llama-cpp-python's own JSON
Schema to GBNF converter (which has no numeric minimum/maximum, among other
gaps: the keyword probe reports them).

It is slow in llama-cpp-python: the grammar sampler sits in the sampler chain
and is run over the whole vocabulary for every token."""

from __future__ import annotations

from collections.abc import Callable

from conformbench.engines.base import DecodeHooks, Engine, Vocabulary, engines
from conformbench.jsontypes import Schema

__all__ = ["GbnfEngine"]


@engines.register("gbnf")
class GbnfEngine(Engine):
    distribution = "llama-cpp-python"
    module = "llama_cpp"

    def _build(
        self, schema: Schema, text: str, vocab: Vocabulary
    ) -> tuple[str, Callable[[int], DecodeHooks]]:
        from llama_cpp.llama_grammar import LlamaGrammar, json_schema_to_gbnf

        try:
            gbnf = json_schema_to_gbnf(text)
        except (RecursionError, MemoryError) as exc:
            raise self.unsupported(f"{type(exc).__name__} while converting") from None
        except Exception as exc:  # noqa: BLE001 - the converter signals gaps with asserts and ValueErrors
            raise self.unsupported(exc) from None
        _check_parses(self, gbnf, vocab)
        grammar = LlamaGrammar.from_string(gbnf, verbose=False)
        # llama.cpp builds a fresh grammar state from the text for every
        # generation, so one LlamaGrammar serves them all.
        hooks = DecodeHooks(grammar=grammar)
        return gbnf, lambda _prompt_tokens: hooks


def _check_parses(engine: Engine, gbnf: str, vocab: Vocabulary) -> None:
    """llama.cpp parses GBNF only when a generation starts, and a failure
    there leaves a NULL sampler in the chain; parse it now instead."""
    import llama_cpp

    sampler = llama_cpp.llama_sampler_init_grammar(vocab.llama_vocab, gbnf.encode(), b"root")
    if not sampler:
        raise engine.unsupported("llama.cpp could not parse the generated GBNF grammar")
    llama_cpp.llama_sampler_free(sampler)
