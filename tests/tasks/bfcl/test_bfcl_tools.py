"""BFCL functions as a server's tools (BFCL's FC-mode conversion), the
tools arms' conditions on bfcl-simple and their answers scored."""

from __future__ import annotations

import json

import pytest

from conformbench.errors import UsageError
from conformbench.records.items import TaskOptions
from conformbench.records.tool_calls import RawToolCall, ToolMode, ToolRequest, calls_text
from conformbench.tasks.base import tasks
from conformbench.tasks.bfcl.fc_tools import PYTHON_HINT, tool_function
from conformbench.tasks.bfcl.functions import BfclFunction


def _task(*arms: str):
    return tasks.get("bfcl-simple")(TaskOptions(n=3, arms=arms))


def test_a_dotted_name_is_sent_renamed_and_types_follow_bfcl():
    function = BfclFunction("math.hypot", "Norm.", {"type": "dict", "required": ["x"], "properties": {
        "x": {"type": "float", "description": "X."},
        "tags": {"type": "tuple", "items": {"type": "any"}},
        "opts": {"type": "dict", "properties": {"deep": {"type": "float", "description": "D."}}},
        "untyped": {"description": "no type"},
    }})
    tool = tool_function(function)
    assert (tool.name, tool.original) == ("math_hypot", "math.hypot")
    assert tool.description == "Norm." + PYTHON_HINT
    props = tool.parameters["properties"]
    assert tool.parameters["type"] == "object" and tool.parameters["required"] == ["x"]
    assert props["x"] == {"type": "number", "format": "float", "description": "X. This is a float type value."}
    assert props["tags"] == {"type": "array", "items": {"type": "string"}}
    assert props["opts"]["type"] == "object" and props["opts"]["properties"]["deep"]["type"] == "number"
    assert props["untyped"]["type"] == "string"
    assert function.parameters["properties"]["x"]["type"] == "float"  # the task's own document is untouched


def test_tools_arms_are_conditions_of_their_mode_and_other_tasks_refuse_them():
    task = _task("tools[auto]", "tools[required,strict]", "tools[named]", "prompt_only")
    assert [c.key for c in task.conditions()] == [
        "tools[auto]", "tools[required,strict]", "tools[named]", "prompt_only[arguments]"]
    with pytest.raises(UsageError, match="offers no functions"):
        tasks.get("gsm8k")(TaskOptions(n=1, arms=("tools[auto]",))).conditions()
    with pytest.raises(UsageError, match=r"mode in brackets"):
        _task("tools").conditions()


def test_a_tools_answer_is_scored_on_its_calls():
    task = _task("tools[required]")
    item = task.items()[1]  # simple_1: math.factorial(number=5)
    cond = task.conditions()[0]
    request = ToolRequest(task.tool_functions(item), ToolMode("required"))
    assert request.functions[0].name == "math_factorial"
    prompt = task.turn_prompt(item, cond, "tools")
    assert [m.content for m in prompt.messages] == [task.question(item)]

    def score(*calls: RawToolCall):
        return task.score(item, cond, calls_text(calls, request), False)

    right = score(RawToolCall(name="math_factorial", arguments='{"number": 5}'))
    assert (right.valid, right.correct) == (True, True)
    wrong_but_valid = score(RawToolCall(name="math_factorial", arguments='{"number": 6}'))
    assert (wrong_but_valid.valid, wrong_but_valid.correct) == (True, False)
    invalid = score(RawToolCall(name="math_factorial", arguments='"celsius"'))
    assert invalid.valid is False and invalid.violations
    unreadable = score(RawToolCall(name="math_factorial", arguments='{"number": '))
    assert unreadable.valid is False and "not JSON" in (unreadable.note or "")
    none = score()
    assert (none.valid, none.correct, none.note) == (False, False, "no call")
    assert task.score(item, cond, "prose, not calls", False).parsed is False
    assert json.loads(calls_text([], request)) == []
