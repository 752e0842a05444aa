"""The loop stop: a tail repeating one unit long enough is a loop; anything
shorter, or not exactly periodic, is not. The real-model test shows a
looping generation ended early with its own finish reason."""

from __future__ import annotations

import json

import pytest

from conformbench.backends.loops import DEFAULT_LOOP_RULE, LoopRule, loop_check_due, loop_period
from conformbench.records.generation import DecodingSettings, GenerationRequest
from conformbench.records.prompt import Message, Prompt


def test_a_nested_schema_loop_is_found_with_its_period() -> None:
    unit = '{"type": "json", "items": '
    assert loop_period("{" + unit * 40) == len(unit)


def test_a_repeated_line_is_a_loop() -> None:
    line = "The answer is 42.\n"
    assert loop_period("Some preamble.\n" + line * 40) == len(line)


@pytest.mark.parametrize("text", [
    "x" * (DEFAULT_LOOP_RULE.min_span - 1),          # too short to judge
    '{"type": "json"} ' * 7,                          # too few repeats
    json.dumps({"values": list(range(400))}),         # long but never periodic
    json.dumps([{"id": i, "name": f"n{i}"} for i in range(60)]),
    "ab" * 200 + "c",                                 # the tail breaks the period
])
def test_what_is_not_a_loop(text: str) -> None:
    assert loop_period(text) is None


def test_the_longest_repeat_a_finished_sample_had_is_not_a_loop() -> None:
    # the XML sample that repeated one indented line for 284 characters and then
    # ended on its own (docs/concodeeval.md, "The loop stop"): the span sits above it
    line = "\n" + " " * 26 + "<type>"
    assert loop_period("<root>" + line * 8 + "</root>") is None
    assert loop_period("<root>" + line * 8) is None
    assert loop_period("<root>" + line * 12) == len(line)  # 350 characters plus one period


def test_a_counting_run_the_arms_turns_cut_is_ended() -> None:
    # BFCL constrained, 384-token turn: "15, 30, 45, ..." repeating inside a string
    assert loop_period('{"times": "' + "15, 30, 45, 60, " * 30) == len("15, 30, 45, 60, ")


@pytest.mark.parametrize("n_tokens, budget, due", [
    (16, 1024, True), (17, 1024, False), (383, 384, False), (384, 384, True),
    (121, 121, True),  # the budget's last token, off the 16-token cadence
])
def test_the_loop_check_runs_on_its_cadence_and_on_the_budgets_last_token(
        n_tokens: int, budget: int, due: bool) -> None:
    assert loop_check_due(n_tokens, budget) is due


def test_the_rule_is_configurable() -> None:
    strict = LoopRule(min_span=10, min_repeats=2, max_period=4)
    assert loop_period("abc" * 5, strict) == 3
    assert loop_period("abcde" * 4, strict) is None  # period 5 > max_period


@pytest.mark.long
@pytest.mark.slow
def test_a_looping_generation_ends_early_with_finish_reason_loop(llama_backend) -> None:
    # the forced start puts greedy SmolLM2 in a loop it never leaves
    prompt = Prompt((Message("user", "Count: write json, json, json, ... and never stop."),),
                    assistant_prefix="json, " * 9 + "json,")
    looped = llama_backend.generate(GenerationRequest(prompt, DecodingSettings(max_tokens=600)))
    full = llama_backend.generate(GenerationRequest(prompt, DecodingSettings(max_tokens=600, loop_stop=False)))
    assert looped.finish_reason == "loop", looped.text[-200:]
    assert looped.completion_tokens < full.completion_tokens
    # the stop keeps what was written: the same greedy text, cut short
    assert full.text.startswith(looped.text)
