"""A schema's YAML or XML grammar as an llguidance matcher over a llama.cpp
model's vocabulary (the embedded SmolLM2 by default).

The tokenizer needs only the vocabulary: the model is opened with
``vocab_only=True`` (no weights are loaded) and the llguidance tokenizer is
built once per model file, as the llguidance engine does for a loaded model.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from conformbench.engines.base import LlamaRuntime
from conformbench.engines.grammars.xml_lark import xml_grammar
from conformbench.engines.grammars.yaml_lark import yaml_grammar
from conformbench.errors import UnknownNameError, UnsupportedSchemaError
from conformbench.jsontypes import Schema
from conformbench.registry import did_you_mean

__all__ = ["GRAMMARS", "ModelVocabulary", "grammar_matcher", "lark_grammar", "model_vocabulary"]

#: output format -> compiler of its Lark grammar
GRAMMARS: dict[str, Callable[[Schema | bool], str]] = {"yaml": yaml_grammar, "xml": xml_grammar}


def lark_grammar(schema: Schema | bool, output_format: str) -> str:
    """The Lark grammar of ``output_format`` answers to ``schema``."""
    if output_format not in GRAMMARS:
        hint = did_you_mean(output_format, sorted(GRAMMARS))
        raise UnknownNameError(
            f"no grammar for output format {output_format!r}{hint}; known: {', '.join(sorted(GRAMMARS))}"
        )
    return GRAMMARS[output_format](schema)


@dataclass(frozen=True)
class ModelVocabulary:
    """A model's tokenizer (llama.cpp's, for encoding text) and llguidance's
    view of the same vocabulary (for matchers)."""

    llm: Any
    llg: Any
    eos: int

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` as the model's own tokenizer splits it."""
        return list(self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def decode(self, tokens: list[int]) -> str:
        return str(self.llg.decode_str(tokens))


@lru_cache(maxsize=4)
def model_vocabulary(model_path: Path | None = None) -> ModelVocabulary:
    """The vocabulary of a GGUF model (the embedded SmolLM2 when None)."""
    from llama_cpp import Llama

    from conformbench.engines.llguidance_engine import llguidance_tokenizer
    from conformbench.models.locate import embedded_model_path

    path = model_path or embedded_model_path()
    llm = Llama(model_path=str(path), vocab_only=True, verbose=False)
    runtime = LlamaRuntime(llm=llm, key=str(path))
    return ModelVocabulary(llm, llguidance_tokenizer(runtime), runtime.eos)


def grammar_matcher(schema: Schema | bool, output_format: str, vocabulary: ModelVocabulary | None = None) -> Any:
    """A fresh ``llguidance.LLMatcher`` for ``output_format`` answers to
    ``schema``; UnsupportedSchemaError when llguidance refuses the grammar."""
    from llguidance import LLMatcher

    vocab = vocabulary or model_vocabulary()
    grammar = LLMatcher.grammar_from_lark(lark_grammar(schema, output_format))
    matcher = LLMatcher(vocab.llg, grammar, log_level=0)
    if matcher.is_error():
        raise UnsupportedSchemaError("grammar", matcher.get_error())
    return matcher
