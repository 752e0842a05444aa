"""The BFCL v4 tasks without a model: data, records, prompts, the envelope
schema, the reader and the scores (the official agreement is
test_official_agreement.py; the model runs are in test_v4_live.py)."""

from __future__ import annotations

import json

import pytest

from conformbench.errors import UsageError
from conformbench.records.items import Condition, TaskOptions
from conformbench.tasks.base import tasks
from conformbench.tasks.bfcl.calls import CATEGORIES, CallAnswer, tool_name
from conformbench.tasks.bfcl.calls.answer_reading import read_calls
from conformbench.tasks.bfcl.calls.prompt_mode import FUNCTION_FORMATS, call_prompt
from conformbench.tasks.bfcl.calls.verdicts import score_calls
from conformbench.tasks.bfcl.checker import reference_arguments
from conformbench.tasks.bfcl.v4 import BfclCallsTask, calls_schema, task_name
from conformbench.tasks.bfcl.v4_data import item_from_json, item_json, load_category
from conformbench.validator.schema_validator import validator_for

SIZES = {"simple_python": 400, "multiple": 200, "parallel": 200, "parallel_multiple": 200, "irrelevance": 240,
         "live_simple": 258, "live_parallel": 16, "live_parallel_multiple": 24}


def _right_text(task: BfclCallsTask, index: int = 0) -> tuple[object, str]:
    item = task.items()[index]
    calls = [{"function": p.name, "parameters": reference_arguments(p.accepted, minimal=False)}
             for p in task.call_item(item).possible]
    return item, json.dumps(calls)


@pytest.mark.parametrize("category", CATEGORIES)
def test_every_category_loads_whole_and_round_trips_through_its_item(category: str) -> None:
    items = load_category(category)
    assert len(items) == SIZES[category]
    assert all(bool(i.possible) == (category != "irrelevance") for i in items)
    assert item_from_json(items[-1].id, item_json(items[-1])) == items[-1]
    assert task_name(category) in tasks.names()


def test_bfcl_simple_v3_is_still_its_own_task() -> None:
    assert tasks.get("bfcl-simple").__module__ == "conformbench.tasks.bfcl.task"
    assert "bfcl-simple-python" in tasks.names()


def test_tool_names_are_mangled_as_bfcl_does_and_map_back() -> None:
    item = next(i for i in load_category("multiple") if any("." in f.name for f in i.functions))
    dotted = next(f for f in item.functions if "." in f.name)
    assert "." not in dotted.tool_name and dotted.tool_name == tool_name(dotted.name)
    assert item.from_tool_name(dotted.tool_name) == dotted.name
    assert item.from_tool_name("not_offered") == "not_offered"


def test_the_envelope_takes_a_right_call_and_no_call_and_refuses_an_unoffered_function() -> None:
    task = tasks.get("bfcl-parallel")(TaskOptions(n=2))
    item, text = _right_text(task)
    validator = validator_for(calls_schema(task.call_item(item)))
    assert validator.is_valid(json.loads(text))
    assert validator.is_valid([])
    assert not validator.is_valid([{"function": "nope", "parameters": {}}])
    assert not validator.is_valid({"function": "x"})


def test_prompt_mode_reads_right_answers_in_any_order_and_scores_them() -> None:
    task = tasks.get("bfcl-parallel")(TaskOptions(n=1))
    item, text = _right_text(task)
    cond = Condition.of("prompt_only", "calls", axes={"function_format": "json"})
    reversed_text = json.dumps(list(reversed(json.loads(text))))
    for answer in (text, reversed_text, f"```json\n{text}\n```"):
        score = task.score(item, cond, answer, False)
        assert score.correct and score.valid, score.note
    wrong = task.score(item, cond, text.replace('"duration": 20', '"duration": 21'), False)
    assert wrong.valid and not wrong.correct  # wrong-but-valid


def test_no_call_is_right_on_irrelevance_only_and_a_forced_call_is_wrong_but_valid() -> None:
    task = tasks.get("bfcl-irrelevance")(TaskOptions(n=1))
    item = task.items()[0]
    cond = Condition.of("constrained", "calls", "llguidance", axes={"function_format": "json"})
    assert task.score(item, cond, "[]", False).correct
    assert task.score(item, cond, "I cannot help with that.", False).correct  # BFCL: no call read
    name = task.call_item(item).functions[0].name
    required = task.call_item(item).functions[0].schema.get("required", [])
    call = json.dumps([{"function": name, "parameters": {r: "x" for r in required}}])
    scored = score_calls(task.call_item(item), read_calls(call))
    assert scored.called and not scored.decision_right and not scored.correct
    assert scored.right_function is None


def test_call_scores_separate_decision_function_and_arguments() -> None:
    item = load_category("multiple")[0]
    expected = item.possible[0]
    other = next(f.name for f in item.functions if f.name != expected.name)
    wrong_function = score_calls(item, CallAnswer.of([(other, {})]))
    assert wrong_function.decision_right and wrong_function.right_function is False
    bad_arguments = score_calls(item, CallAnswer.of([(expected.name, {"unknown": 1})]))
    assert bad_arguments.right_function and bad_arguments.arguments_valid is False
    none = score_calls(item, CallAnswer())
    assert not none.decision_right and none.arguments_valid is None and not none.correct


def test_the_reader_is_no_stricter_than_bfcls_and_says_what_it_could_not_read() -> None:
    assert read_calls('Sure: [{"function": "f", "parameters": {"a": 1}}] done').calls[0].arguments == {"a": 1}
    assert read_calls('{"function": "f", "parameters": {}}').calls[0].name == "f"  # wrapped in [ ] as BFCL does
    assert read_calls('[{"function": "f", "parameters": "a=1"}]').readable is False
    assert read_calls('[{"name": "f"}]').readable is False
    assert read_calls("no calls here").no_call and read_calls("no calls here").readable
    assert read_calls("[" + "{a}," * 5000 + "x").no_call  # linear time: RE2, not re


@pytest.mark.parametrize("function_format", FUNCTION_FORMATS)
def test_every_function_format_renders_every_multiple_item(function_format: str) -> None:
    for item in load_category("multiple"):
        prompt = call_prompt(item, function_format)
        assert prompt.messages[0].role == "system" and prompt.messages[-1].content == item.question()
        assert all(f.name in prompt.messages[0].content for f in item.functions)


def test_an_items_system_message_follows_bfcls_system_prompt() -> None:
    item = next(i for i in load_category("live_simple") if i.messages[0].role == "system")
    prompt = call_prompt(item, "json")
    assert len(prompt.messages) == 2 and prompt.messages[0].content.endswith(item.messages[0].content)


def test_function_format_is_a_grid_axis_named_in_the_condition() -> None:
    task = tasks.get("bfcl-multiple")(TaskOptions(n=1, params={"function_format": ["yaml", "python"]}))
    keys = [c.key for c in task.conditions()]
    assert keys == ["function_format=yaml/prompt_only[calls]", "function_format=yaml/constrained[calls]@llguidance",
                    "function_format=python/prompt_only[calls]",
                    "function_format=python/constrained[calls]@llguidance"]
    with pytest.raises(UsageError, match="did you mean 'yaml'"):
        tasks.get("bfcl-multiple")(TaskOptions(params={"function_format": ["yml"]}))


def test_non_finite_numbers_never_leave_the_json_data_model() -> None:
    (call,) = read_calls('[{"function": "f", "parameters": {"a": NaN, "b": -Infinity}}]').calls
    assert call.arguments == {"a": "NaN", "b": "-Infinity"}
    json.dumps(call.arguments, allow_nan=False)


def test_v4s_extra_keywords_are_kept_and_required_without_properties_is_required() -> None:
    from conformbench.tasks.bfcl.functions import to_json_schema

    spec = {"type": "array", "minItems": 1, "maxItems": 3, "items": {"type": "string", "format": "date"}}
    assert to_json_schema(spec, "x") == {"type": "array", "minItems": 1, "maxItems": 3,
                                         "items": {"type": "string", "format": "date"}}
    assert to_json_schema({"type": "integer", "maximum": 400}, "x") == {"type": "integer", "maximum": 400}
    loose = to_json_schema({"type": "dict", "required": ["adults"]}, "x")
    assert loose == {"type": "object", "required": ["adults"]}
    assert not validator_for(loose).is_valid({}) and validator_for(loose).is_valid({"adults": 2})
