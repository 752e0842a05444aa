"""llguidance (Microsoft's Earley-parser engine) on llama.cpp's vocabulary.

The tokenizer bridge reads the vocabulary straight from the llama.cpp model
(about 0.3 s for SmolLM2, so it is built once per model). A schema becomes a
grammar once; each generation gets a copy of a pristine matcher.

By default llguidance refuses a schema with a keyword it cannot enforce.
Here it compiles in its lenient mode (``"x-guidance": {"lenient": true}``):
the keyword is left to the validator, as every engine's gaps are, and the
grammar's own warnings ('Unimplemented keys: ["uniqueItems"]') are recorded
with each generation, so an item stays in the grammar's cell instead of
leaving it. What llguidance cannot compile even then is an
UnsupportedSchemaError with its own message.

llguidance also takes Lark grammars, so it constrains our YAML and XML
answer forms too: for a yaml or xml cell the schema is compiled by
``engines.grammars`` into a Lark grammar of that form (docs/grammars.md),
recorded as the engine input; the keywords that grammar leaves to the
validator are recorded like the lenient mode's warnings.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from conformbench.engines.base import (
    Acceptor,
    Built,
    DecodeHooks,
    Engine,
    Vocabulary,
    Walk,
    engines,
    seconds_of,
    time_masks,
)
from conformbench.engines.grammars.matcher import GRAMMARS, lark_grammar, llguidance_tokenizer
from conformbench.engines.grammars.read import unenforced_keywords
from conformbench.engines.masking import MaskProcessor, TokenMatcher
from conformbench.engines.thinking_grammar import thinking_grammar
from conformbench.errors import UnsupportedSchemaError
from conformbench.jsontypes import Schema
from conformbench.records.generation import Thinking

__all__ = ["LlguidanceEngine", "llguidance_tokenizer"]


class _Matcher(TokenMatcher):
    forces = True

    def __init__(self, matcher: Any) -> None:
        self._m = matcher

    def advance(self, tokens: list[int]) -> None:
        if not self._m.consume_tokens(tokens):
            raise ValueError(self._m.get_error() or f"llguidance rejected tokens {tokens}")

    def fill_bitmask(self, bitmask: npt.NDArray[np.int32]) -> None:
        from llguidance.numpy import fill_next_token_bitmask

        fill_next_token_bitmask(self._m, bitmask)

    def forced(self) -> list[int]:
        return list(self._m.compute_ff_tokens())

    def fork(self) -> _Matcher:
        """An independent copy of this state (each beam of a beam search
        carries its own)."""
        return _Matcher(self._m.deep_copy())

    @property
    def llmatcher(self) -> Any:
        """The LLMatcher itself: batched decoding fills the masks of many
        sequences in one parallel llguidance call."""
        return self._m


class _Acceptor:
    """Walks tokens through copies of a pristine matcher."""

    def __init__(self, pristine: Any, n_vocab: int) -> None:
        self._pristine = pristine
        self._n_vocab = n_vocab

    def walk(self, tokens: Sequence[int]) -> Walk:
        matcher = self._pristine.deep_copy()
        consumed = matcher.try_consume_tokens(list(tokens))
        if consumed < len(tokens):
            return Walk(accepted=False, consumed=consumed)
        return Walk(accepted=bool(matcher.is_accepting()), consumed=consumed)

    def mask_seconds(self, tokens: Sequence[int], positions: Sequence[int]) -> list[float]:
        from llguidance.numpy import fill_next_token_bitmask

        matcher = self._pristine.deep_copy()
        bitmask = np.zeros((1, (self._n_vocab + 31) // 32), dtype=np.int32)
        return time_masks(tokens, positions, lambda: seconds_of(lambda: fill_next_token_bitmask(matcher, bitmask)),
                          matcher.consume_token)

    def close(self) -> None:
        pass


@engines.register("llguidance")
class LlguidanceEngine(Engine):
    distribution = "llguidance"
    module = "llguidance"
    output_forms = ("json", *GRAMMARS)
    thinks = True
    #: compile JSON Schema leniently: what llguidance cannot state is left to
    #: the validator and counted, instead of refusing the schema
    lenient: ClassVar[bool] = True

    def _matcher(self, text: str, vocab: Vocabulary) -> tuple[str, Any]:
        """(grammar JSON, a pristine matcher) for the schema text."""
        from llguidance import LLMatcher

        try:
            grammar = LLMatcher.grammar_from_json_schema(text, defaults={"lenient": self.lenient})
        except ValueError as exc:
            raise self.unsupported(exc) from None
        return grammar, self._pristine(grammar, vocab)

    def _pristine(self, grammar: str, vocab: Vocabulary) -> Any:
        """A pristine matcher of llguidance's grammar JSON."""
        from llguidance import LLMatcher

        tokenizer = vocab.memo("llguidance.tokenizer", lambda: llguidance_tokenizer(vocab))
        pristine = LLMatcher(tokenizer, grammar, log_level=0)
        if pristine.is_error():
            raise self.unsupported(pristine.get_error())
        return pristine

    def _lark(self, schema: Schema, output_format: str) -> tuple[str, tuple[str, ...]]:
        """The form's Lark grammar of ``schema`` and what it leaves unenforced."""
        try:
            return lark_grammar(schema, output_format), tuple(
                f"not in the {output_format} grammar: {k}" for k in unenforced_keywords(schema))
        except UnsupportedSchemaError as exc:
            raise self.unsupported(f"{output_format} grammar: {exc.reason}") from None
        except (ValueError, TypeError, RecursionError) as exc:  # a malformed schema the reader trips on
            raise self.unsupported(f"{output_format} grammar: {type(exc).__name__}: {exc}") from None

    def _acceptor(self, schema: Schema, text: str, vocab: Vocabulary, timeout_s: float | None) -> Acceptor:
        return _Acceptor(self._matcher(text, vocab)[1], vocab.n_vocab)

    def _build(self, schema: Schema, text: str, vocab: Vocabulary) -> Built:
        grammar, pristine = self._matcher(text, vocab)
        return Built(grammar, _starter(pristine, vocab), _warnings(pristine))

    def _build_form(self, schema: Schema, output_format: str, vocab: Vocabulary) -> Built:
        """A YAML or XML answer grammar; its Lark text is the engine input."""
        from llguidance import LLMatcher

        lark, unstated = self._lark(schema, output_format)
        pristine = self._pristine(LLMatcher.grammar_from_lark(lark), vocab)
        return Built(lark, _starter(pristine, vocab), (*unstated, *_warnings(pristine)))

    def _build_thinking(self, schema: Schema, thinking: Thinking, vocab: Vocabulary) -> Built:
        """Free text up to the stop string, then the schema (engines/thinking_grammar.py);
        the Lark grammar is the engine input (the thinking's budget is the
        decoder's: backends/thinking_budget.py)."""
        from llguidance import LLMatcher

        lark = thinking_grammar(schema, thinking.stop, self.lenient)
        try:
            grammar = LLMatcher.grammar_from_lark(lark)
        except ValueError as exc:
            raise self.unsupported(exc) from None
        pristine = self._pristine(grammar, vocab)
        return Built(lark, _starter(pristine, vocab), _warnings(pristine))


def _warnings(pristine: Any) -> tuple[str, ...]:
    return tuple(str(w) for w in pristine.get_grammar_warnings())


def _starter(pristine: Any, vocab: Vocabulary) -> Callable[[int], DecodeHooks]:
    """Each generation's hooks: a copy of the pristine matcher."""
    stop_ids = frozenset({vocab.eos})

    def start(prompt_tokens: int) -> DecodeHooks:
        matcher = _Matcher(pristine.deep_copy())
        return DecodeHooks(processor=MaskProcessor(matcher, prompt_tokens, stop_ids))

    return start
