"""The public face of the grammar compiler (``conformbench.engines.grammars``,
internal): a JSON Schema as llguidance Lark text for JSON, YAML or XML
answers, a matcher over a model's vocabulary, and what a grammar leaves to
the validator. docs/grammars.md shows them in use.

Like ``conformbench`` itself, this module only re-exports: the modules
behind it may change, these names may not without a note."""

from __future__ import annotations

from conformbench.engines.grammars.matcher import grammar_matcher, lark_grammar, model_vocabulary
from conformbench.engines.grammars.read import read_shape, unenforced_keywords

__all__ = ["grammar_matcher", "lark_grammar", "model_vocabulary", "read_shape", "unenforced_keywords"]
