"""Free text, then the schema, in one call: llguidance's grammar on the
embedded model's vocabulary (no weights). The matcher comes wrapped as a
decoder wraps it (backends/thinking_budget.py) with a budget no test reaches."""

from __future__ import annotations

import json

import pytest
from thinking_matcher import ANSWER, allowed_tokens, thinking_matcher, walk

from conformbench.engines.base import engines
from conformbench.engines.thinking_grammar import split_thinking
from conformbench.errors import UnsupportedSchemaError, UsageError
from conformbench.records.generation import Thinking


def test_the_grammar_takes_free_text_then_the_schema(smollm_vocab):
    matcher = thinking_matcher(smollm_vocab)
    tokens = smollm_vocab.tokenize('3+4 = 7.</think>{"answer": 7}')
    assert walk(matcher, tokens) == len(tokens)
    assert matcher.closed and matcher.think_cut is None
    assert list(allowed_tokens(matcher, smollm_vocab.n_vocab)) == [smollm_vocab.eos]  # nothing more but the end


def test_the_grammar_refuses_prose_after_the_stop_string(smollm_vocab):
    matcher = thinking_matcher(smollm_vocab)
    tokens = smollm_vocab.tokenize("</think>The answer is 7")
    assert walk(matcher, tokens) < len(tokens)


def test_the_stop_string_is_configurable(smollm_vocab):
    matcher = thinking_matcher(smollm_vocab, stop="ANSWER:")
    tokens = smollm_vocab.tokenize('seven ANSWER:{"answer": 7}')
    assert walk(matcher, tokens) == len(tokens)
    refused = thinking_matcher(smollm_vocab, stop="ANSWER:")
    bad = smollm_vocab.tokenize('seven</think>{"answer": 7}')
    assert walk(refused, bad) == len(bad)  # '</think>' is free text here: no answer yet
    assert not refused.closed


@pytest.mark.parametrize("engine", ["xgrammar", "outlines", "gbnf"])
def test_engines_without_a_free_text_rule_refuse_thinking(engine, smollm_vocab):
    try:
        with pytest.raises(UnsupportedSchemaError, match="llguidance"):
            engines.get(engine)().compile(ANSWER, smollm_vocab, thinking=Thinking())
    except UsageError as exc:  # the engine is not installed here
        pytest.skip(str(exc))


def test_the_grammar_is_the_recorded_engine_input(smollm_vocab):
    compiled = engines.get("llguidance")().compile(ANSWER, smollm_vocab, thinking=Thinking("</think>", 8))
    assert compiled.engine_input.startswith("start: think answer\n")
    assert 'think[stop="</think>"]' in compiled.engine_input
    schema = json.loads(compiled.engine_input.split("%json ", 1)[1])
    assert schema.pop("x-guidance") == {"lenient": True} and schema == ANSWER


def test_split_thinking_reads_only_after_the_first_stop_string():
    assert split_thinking('a</think>{"answer": 1}</think>', "</think>") == ("a", '{"answer": 1}</think>')
    assert split_thinking("no stop", "</think>") == ("no stop", None)


@pytest.mark.parametrize("stop", ["", "x" * 65, "a\nb"])
def test_a_bad_stop_string_is_one_clear_error(stop):
    with pytest.raises(UsageError, match="stop string"):
        Thinking(stop, 8)
