"""A schema's YAML or XML grammar as an llguidance matcher over a model's
``Vocabulary`` (a loaded model's, or a vocabulary-only load of a GGUF file:
no weights needed). The llguidance tokenizer is built once per vocabulary
(here, for the llguidance engine too)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from conformbench.engines.base import Vocabulary
from conformbench.engines.grammars.xml_lark import xml_grammar
from conformbench.engines.grammars.yaml_lark import yaml_grammar
from conformbench.errors import UnknownNameError, UnsupportedSchemaError
from conformbench.jsontypes import Schema
from conformbench.registry import did_you_mean

__all__ = ["GRAMMARS", "ModelVocabulary", "grammar_matcher", "lark_grammar", "llguidance_tokenizer", "model_vocabulary"]

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
    """A model's ``Vocabulary`` (for encoding text) and llguidance's view of
    the same vocabulary (for matchers)."""

    vocab: Vocabulary
    llg: Any

    @property
    def eos(self) -> int:
        return self.vocab.eos

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` as the model's own tokenizer splits it."""
        return self.vocab.tokenize(text)

    def decode(self, tokens: list[int]) -> str:
        return str(self.llg.decode_str(tokens))


def llguidance_tokenizer(vocab: Vocabulary) -> Any:
    """llguidance's tokenizer for the vocab's vocabulary (0.4 s: memoise it)."""
    from llguidance.llamacpp import lltokenizer_from_vocab

    # The bridge calls a llama-cpp-python function deprecated in 0.3.x once
    # per token: 49k identical warnings.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return lltokenizer_from_vocab(vocab.llama_vocab, n_vocab=vocab.n_vocab)


def model_vocabulary(vocab: Vocabulary) -> ModelVocabulary:
    """``vocab`` with its llguidance tokenizer (built once per vocabulary)."""
    return ModelVocabulary(vocab, vocab.memo("llguidance.tokenizer", lambda: llguidance_tokenizer(vocab)))


def grammar_matcher(schema: Schema | bool, output_format: str, vocabulary: ModelVocabulary) -> Any:
    """A fresh ``llguidance.LLMatcher`` for ``output_format`` answers to
    ``schema``; UnsupportedSchemaError when llguidance refuses the grammar."""
    from llguidance import LLMatcher

    vocab = vocabulary
    grammar = LLMatcher.grammar_from_lark(lark_grammar(schema, output_format))
    matcher = LLMatcher(vocab.llg, grammar, log_level=0)
    if matcher.is_error():
        raise UnsupportedSchemaError("grammar", matcher.get_error())
    return matcher
