"""vLLM's structured outputs as engines (engines/vllm_structured.py): what
each hands vLLM (the schema's text, or for vllm:guidance an arm's Lark
grammar), which can think first, and that a model-free ``engines check``
leaves them out (vLLM compiles them inside its engine)."""

from __future__ import annotations

from typing import cast

import pytest

from conformbench.audits.engine_check.run import CheckConfig, _engine_names
from conformbench.engines.base import Vocabulary, engines, schema_text
from conformbench.engines.thinking_grammar import thinking_grammar
from conformbench.engines.vllm_structured import VllmEngine
from conformbench.errors import UnsupportedSchemaError
from conformbench.records.generation import Thinking

SCHEMA = {"type": "object", "properties": {"answer": {"type": "integer", "minimum": 0}}, "required": ["answer"]}
NO_VOCABULARY = cast(Vocabulary, None)  # vLLM compiles for its own tokenizer


@pytest.mark.parametrize(("name", "backend", "thinks"), [
    ("vllm:xgrammar", "xgrammar", False), ("vllm:guidance", "guidance", True), ("vllm:outlines", "outlines", False)])
def test_each_engine_names_its_vllm_backend(name: str, backend: str, thinks: bool) -> None:
    engine = engines.get(name)()
    assert isinstance(engine, VllmEngine) and engine.backend == backend and engine.thinks is thinks
    assert engine.model_free is False
    text, start = engine._build(SCHEMA, schema_text(SCHEMA), NO_VOCABULARY)
    assert text == schema_text(SCHEMA) and start(10).grammar is None and start(10).processor is None


def test_guidance_hands_vllm_the_arms_lark_grammar() -> None:
    built = engines.get("vllm:guidance")()._build_thinking(SCHEMA, Thinking(stop="</think>"), NO_VOCABULARY)
    assert built.engine_input == thinking_grammar(SCHEMA, "</think>")
    with pytest.raises(UnsupportedSchemaError, match="no free-text rule"):
        engines.get("vllm:xgrammar")()._build_thinking(SCHEMA, Thinking(stop="</think>"), NO_VOCABULARY)


def test_a_model_free_check_leaves_vllms_engines_out() -> None:
    names = _engine_names(CheckConfig())
    assert names and not [n for n in names if n.startswith("vllm:")]
    assert _engine_names(CheckConfig(engines=("vllm:xgrammar",))) == ["vllm:xgrammar"]
