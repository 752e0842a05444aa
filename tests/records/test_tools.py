"""The tools records: the arm's mode as its bracket writes it, the request
a tools turn makes, and the scored text of the calls a server returned."""

from __future__ import annotations

import json

import pytest

from conformbench.errors import UsageError
from conformbench.records.items import Condition
from conformbench.records.prompt import Message, Prompt
from conformbench.records.replay import GenerationRecord
from conformbench.records.tool_calls import (
    RawToolCall,
    ToolFunction,
    ToolMode,
    ToolRequest,
    calls_text,
    parse_tool_mode,
)

FN = ToolFunction("math_factorial", "Factorial.", {"type": "object", "properties": {"n": {"type": "integer"}}},
                  "math.factorial")


@pytest.mark.parametrize(("text", "mode"), [
    ("auto", ToolMode("auto")), ("required,strict", ToolMode("required", True)),
    (" named , strict ", ToolMode("named", True)),
])
def test_a_mode_reads_as_written_and_prints_canonically(text, mode):
    assert parse_tool_mode(text) == mode
    assert parse_tool_mode(mode.spec) == mode


@pytest.mark.parametrize(("text", "said"), [
    ("requird", "did you mean 'required'"), ("auto,strictly", "only 'strict'"), ("auto,strict,strict", "once"),
])
def test_a_bad_mode_is_one_line_with_a_hint(text, said):
    with pytest.raises(UsageError, match=said) as caught:
        parse_tool_mode(text)
    assert "\n" not in str(caught.value)


def test_named_forces_the_function_by_name_and_strict_goes_with_each_function():
    with pytest.raises(UsageError, match="at least one function"):
        ToolRequest((), ToolMode("auto"))
    named = ToolRequest((FN,), ToolMode("named", strict=True))
    assert named.tool_choice() == {"type": "function", "function": {"name": "math_factorial"}}
    assert FN.as_tool(True)["function"]["strict"] is True and "strict" not in FN.as_tool(False)["function"]


def test_the_scored_text_maps_names_back_and_keeps_unreadable_arguments_raw():
    request = ToolRequest((FN,), ToolMode("required"))
    calls = [RawToolCall(name="math_factorial", arguments='{"n": 5}', id="c1"),
             RawToolCall(name="other", arguments='"celsius"'),
             RawToolCall(name="math_factorial", arguments='{"n": ')]
    assert json.loads(calls_text(calls, request)) == [
        {"name": "math.factorial", "arguments": {"n": 5}}, {"name": "other", "arguments": "celsius"},
        {"name": "math.factorial", "arguments_text": '{"n": '}]
    assert calls_text([], request) == "[]"


def test_a_tools_condition_is_labelled_by_its_mode_and_old_conditions_are_unchanged():
    cond = Condition.of("tools", mode="required,strict")
    assert cond.arm_key == "tools[required,strict]" and cond.key == "tools[required,strict]"
    assert Condition("prompt_only", "arguments").key == "prompt_only[arguments]"
    record = GenerationRecord(task="t", model="m", item_id="1", condition=Condition("prompt_only", "arguments"),
                              prompt=Prompt((Message("user", "q"),)))
    dumped = record.model_dump_json()
    assert '"mode"' not in dumped and "tool_calls" not in dumped and "server_finish_reason" not in dumped
    tooled = record.model_copy(update={"condition": cond, "tool_calls": [RawToolCall(name="f", arguments="{}")],
                                       "server_finish_reason": "tool_calls"})
    again = GenerationRecord.model_validate_json(tooled.model_dump_json())
    assert again == tooled and again.condition.mode == "required,strict"
