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


def test_the_function_format_axis_leaves_the_tools_arms_run_once():
    """A tools arm sends the functions through the API's tools: the prompt
    mode's rendering format is not its axis, so several formats run the
    prompt-mode arms once each and every tools arm once, without the axis."""
    arms = ("prompt_only[calls]", "tools[auto]", "tools[required,strict]")
    task = tasks.get("bfcl-multiple")(TaskOptions(n=1, arms=arms, params={"function_format": ["yaml", "python"]}))
    conditions = task.conditions()
    assert [c.key for c in conditions] == ["function_format=yaml/prompt_only[calls]", "tools[auto]",
                                           "tools[required,strict]", "function_format=python/prompt_only[calls]"]
    assert [c.axis("function_format") for c in conditions if c.mode is not None] == [None, None]


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


def _v4(name: str, *arms: str):
    return tasks.get(name)(TaskOptions(n=2, arms=arms))


def test_a_v4_tools_answer_is_judged_as_bfcls_fc_mode_on_the_prompt_arms_contract():
    task = _v4("bfcl-parallel", "tools[required]")
    item, cond = task.items()[0], task.conditions()[0]
    call_item = task.call_item(item)
    request = ToolRequest(task.tool_functions(item), ToolMode("required"))
    assert task.turn_prompt(item, cond, "tools").messages[-1].content == call_item.question()
    right = [RawToolCall(name=request.functions[0].name, arguments=json.dumps(
        {k: v[0] for k, v in p.accepted.items() if v and v[0] != ""})) for p in call_item.possible]
    scored = task.score(item, cond, calls_text(right, request), False)
    assert (scored.valid, scored.correct) == (True, True), scored.note
    reversed_order = task.score(item, cond, calls_text(right[::-1], request), False)
    assert reversed_order.correct is True  # parallel calls match in any order
    forced_string = task.score(item, cond, calls_text([RawToolCall(name=right[0].name, arguments='"celsius"')],
                                                      request), False)
    assert (forced_string.valid, forced_string.correct) == (False, False)
    assert "not a JSON object" in (forced_string.note or "")
    no_call = task.score(item, cond, "[]", False)
    assert (no_call.valid, no_call.correct) == (True, False)  # a valid envelope, the wrong decision


def test_on_irrelevance_only_no_call_is_right_and_named_cells_need_one_function():
    task = _v4("bfcl-irrelevance", "tools[auto]")
    item, cond = task.items()[0], task.conditions()[0]
    request = ToolRequest(task.tool_functions(item), ToolMode("auto"))
    assert task.score(item, cond, "[]", False).correct is True
    called = RawToolCall(name=request.functions[0].name, arguments="{}")
    assert task.score(item, cond, calls_text([called], request), False).correct is False
    unreadable = RawToolCall(name=request.functions[0].name, arguments="{not json")
    assert task.score(item, cond, calls_text([unreadable], request), False).correct is True  # BFCL: no call


def test_a_backend_that_sends_no_tools_refuses_the_tools_arms_in_one_line(tmp_path, capsys):
    from conformbench.cli.main import main

    code = main(["run", "--task", "bfcl-parallel", "-n", "1", "--arm", "tools[required,strict]",
                 "--out", str(tmp_path / "out"), "--quiet"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert "tools[required,strict]" in err and "--backend openai" in err
    assert not (tmp_path / "out" / "replay.jsonl").exists()
