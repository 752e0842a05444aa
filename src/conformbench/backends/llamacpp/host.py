"""What the batched and fast-forward decoders use of the llamacpp backend.

They are driven by ``LlamaCppBackend`` and call back into it (its compile
cache, tokenizer, stop rules, counters); typing them against this Protocol
instead of the backend class keeps the imports one way: backend.py imports
the decoders, the decoders import only this module."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from conformbench.backends.runinfo import LocalCounters

if TYPE_CHECKING:
    from conformbench.backends.llamacpp.vocabulary import LlamaVocabulary
    from conformbench.engines.base import CompiledConstraint
    from conformbench.records.generation import BackendConfig, Constraint, DecodingSettings
    from conformbench.records.prompt import Prompt

__all__ = ["SAMPLER", "Counters", "DecoderHost", "Finish", "stop_at"]

Finish = Literal["stop", "length", "loop"]
#: sampler settings used when temperature > 0 (greedy at 0); fixed and
#: recorded so that runs are comparable
SAMPLER: dict[str, float] = {"top_k": 40, "top_p": 0.95, "min_p": 0.05, "repeat_penalty": 1.0}


def stop_at(text: str, stops: tuple[str, ...]) -> int | None:
    """Index of the earliest stop string in ``text``, or None."""
    hits = [i for i in (text.find(s) for s in stops if s) if i >= 0]
    return min(hits) if hits else None


@dataclass
class Counters(LocalCounters):
    """The backend's counters, reported in its run metadata."""

    #: prompt tokens taken from the KV cache instead of being evaluated
    prefix_tokens_reused: int = 0


class DecoderHost(Protocol):
    """The backend as its decoders see it (``LlamaCppBackend`` is one)."""

    config: BackendConfig
    vocabulary: LlamaVocabulary
    counters: Counters

    @property
    def llama(self) -> Any:
        """The ``llama_cpp.Llama``."""

    def compile(self, constraint: Constraint) -> tuple[CompiledConstraint, bool]:
        """(compiled constraint, freshly compiled?), from the backend's cache."""

    def tokenize_prompt(self, prompt: Prompt) -> list[int]:
        """The prompt's tokens as the backend renders it."""

    def reuse_prefix(self, tokens: list[int]) -> int:
        """Keep the reusable cached prefix; the index evaluation starts from."""

    def end_after(self, out: list[int], prompt_tokens: list[int], settings: DecodingSettings,
                  budget: int) -> Finish | None:
        """The stop rules after a token is added to ``out``."""

    def finish_text(
        self, out: list[int], prompt_tokens: list[int], stops: tuple[str, ...], finish: Finish,
    ) -> tuple[str, Finish]:
        """The output text, cut at the first stop string."""

    def char_of(self, out: list[int], prompt_tokens: list[int]) -> Callable[[int], int]:
        """The character offset of output token ``i`` in the text of ``out``."""
