"""BFCL v3 simple: type mapping, AST checker, Python-call answers, scoring."""

from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from conformbench.errors import UsageError
from conformbench.records.items import Condition, Item, TaskOptions
from conformbench.tasks.base import tasks
from conformbench.tasks.bfcl.checker import check_call, reference_arguments, standardize
from conformbench.tasks.bfcl.functions import (
    ANY_TYPES,
    BfclFunction,
    FunctionCall,
    parameters_schema,
    to_json_schema,
)
from conformbench.tasks.bfcl.task import BfclSimpleTask, item_function
from conformbench.validator.schema_validator import check_schema, validator_for

REPO = Path(__file__).resolve().parents[3]
DATA = REPO / "src" / "conformbench" / "data"
SHARED = REPO.parent / "shared" / "data"

FREE = Condition("unconstrained")
PROMPT_ONLY = Condition("prompt_only", "arguments")
CONSTRAINED = Condition("constrained", "arguments", "llguidance")
PACKAGED = Condition("reason_then_constrain", "arguments", "llguidance")

#: items whose full reference call (first concrete possible answer of every
#: parameter) is not valid against the converted schema. simple_307: the
#: dataset lists `true` as a possible answer of the string parameter `venue`;
#: the official checker accepts it (a value of the possible answers' own type).
SCHEMA_EXCLUSIONS = ["simple_307"]


@pytest.fixture(scope="module")
def task() -> BfclSimpleTask:
    built = tasks.get("bfcl-simple")(TaskOptions())
    assert isinstance(built, BfclSimpleTask)
    return built


@pytest.fixture(scope="module")
def items(task: BfclSimpleTask) -> list[Item]:
    return task.items()


def _possible(item: Item) -> dict[str, list[Any]]:
    assert isinstance(item.target, dict)
    return item.target


def _reference(item: Item, minimal: bool) -> dict[str, Any]:
    required = tuple(item_function(item).parameters.get("required", []))
    return reference_arguments(_possible(item), minimal=minimal, required=required)


def _python_call(name: str, arguments: dict[str, Any]) -> str:
    return f"{name}(" + ", ".join(f"{k}={v!r}" for k, v in arguments.items()) + ")"


def test_items(items: list[Item]) -> None:
    assert len(items) == 400
    assert [i.id for i in items[:2]] == ["simple_0", "simple_1"]
    assert items[0].input["question"].startswith("Find the area of a triangle")
    assert items[0].target == {"base": [10], "height": [5], "unit": ["units", ""]}
    # the function name comes from the function document (the possible
    # answer of simple_363 names it 'find_closest')
    assert item_function(items[363]).name == "restaurant_search.find_closest"


@pytest.mark.skipif(not SHARED.is_dir(), reason="a maintainer check: compares the shipped BFCL v3 simple files with the original download, which is not on this machine (../shared/data)")
def test_shipped_data_is_byte_for_byte() -> None:
    for name in ("BFCL_v3_simple.json", "BFCL_v3_simple_possible_answer.json", "LICENSE"):
        assert (DATA / "bfcl" / name).read_bytes() == (SHARED / "bfcl" / name).read_bytes()


def test_every_converted_schema_is_valid_and_fits_its_answers(items: list[Item]) -> None:
    excluded = []
    for item in items:
        schema = parameters_schema(item_function(item))
        check_schema(schema)
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        validator = validator_for(schema)
        assert validator.is_valid(_reference(item, minimal=True)), item.id
        if not validator.is_valid(_reference(item, minimal=False)):
            excluded.append(item.id)
    assert excluded == SCHEMA_EXCLUSIONS


def test_type_mapping() -> None:
    spec = {
        "type": "dict",
        "properties": {
            "z": {"type": "float", "description": "d", "default": 1.5},
            "a": {"type": "tuple", "items": {"type": "float"}},
            "any": {"type": "any"},
            "flag": {"type": "boolean", "optional": True},
            "n": {"type": "integer", "enum": [1, 2]},
            "deck": {"type": "array", "items": {"type": "dict", "properties": {"s": {"type": "string"}}}},
            "bag": {"type": "dict"},
        },
        "required": ["z", "a"],
        "optional": [],
    }
    out = to_json_schema(spec, "f")
    assert list(out["properties"]) == ["z", "a", "any", "flag", "n", "deck", "bag"]
    assert out["properties"]["z"] == {"type": "number", "description": "d", "default": 1.5}
    assert out["properties"]["a"] == {"type": "array", "items": {"type": "number"}}
    assert out["properties"]["any"] == {"type": list(ANY_TYPES)}
    assert out["properties"]["flag"] == {"type": "boolean"}
    assert out["properties"]["n"] == {"type": "integer", "enum": [1, 2]}
    assert out["properties"]["deck"]["items"] == {
        "type": "object", "properties": {"s": {"type": "string"}}, "additionalProperties": False}
    assert out["properties"]["bag"] == {"type": "object"}
    assert out["required"] == ["z", "a"] and out["additionalProperties"] is False
    check_schema(out)
    for value in ("x", 1, 1.5, True, None, [1], {"k": 1}):
        assert validator_for(out["properties"]["any"]).is_valid(value)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"type": "complex"}, "unknown BFCL type"),
        ({"type": "string", "pattern": "a+"}, "unknown BFCL key"),
        ({"type": "string", "required": ["x"]}, "'required' on a"),
        ({"type": "dict", "properties": {}, "required": ["x"]}, "not declared"),
        ({"type": "string", "items": {"type": "string"}}, "'items' on a"),
        ({"type": "integer", "properties": {}}, "'properties' on a"),
    ],
)
def test_type_mapping_rejects(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        to_json_schema(spec, "f.x")


# ----------------------------------------------------------------- checker


def test_reference_answers_are_right(items: list[Item]) -> None:
    for item in items:
        function = item_function(item)
        for minimal in (False, True):
            call = FunctionCall(function.name, _reference(item, minimal))
            verdict = check_call(function, call, _possible(item), check_name=True)
            assert verdict.correct, (item.id, minimal, verdict.error)


def _other_value(value: Any, options: list[Any]) -> Any:
    """A value of the same JSON type that is not among the options (None
    when there is none: a boolean whose possible answers hold both)."""
    if type(value) is bool:
        candidate: Any = None if (not value) in options else not value
    elif type(value) is int:
        candidate = max([o for o in options if type(o) is int] + [value]) + 7919
    elif type(value) is float:
        candidate = value + 7919.5
    elif type(value) is str:
        candidate = value + " zzqx"
    elif type(value) is list:
        candidate = [*value, value[0] if value else "zzqx"]
    else:
        candidate = {**value, "zzqx": 1}
    return candidate


def test_mutated_answers_are_wrong(items: list[Item]) -> None:
    counts = {"value": 0, "both_booleans": 0, "missing": 0, "extra": 0}
    still_right = []
    for item in items:
        function = item_function(item)
        possible = _possible(item)
        reference = _reference(item, minimal=False)
        for name, value in reference.items():
            other = _other_value(value, possible[name])
            if other is None:
                counts["both_booleans"] += 1
                continue
            args = {**reference, name: other}
            verdict = check_call(function, FunctionCall(function.name, args), possible, check_name=True)
            counts["value"] += 1
            if verdict.correct:
                still_right.append((item.id, name))
        for name in function.parameters.get("required", []):
            args = {k: v for k, v in reference.items() if k != name}
            counts["missing"] += 1
            assert not check_call(function, FunctionCall(function.name, args), possible,
                                  check_name=True).correct
        args = {**reference, "zzqx_extra": 1}
        counts["extra"] += 1
        verdict = check_call(function, FunctionCall(function.name, args), possible, check_name=True)
        assert not verdict.correct and verdict.error == "unexpected parameter 'zzqx_extra'"
        wrong_name = FunctionCall(function.name + "_v2", reference)
        assert not check_call(function, wrong_name, possible, check_name=True).correct
    assert still_right == []
    assert counts == {"value": 1137, "both_booleans": 6, "missing": 866, "extra": 400}


def _fn(properties: dict[str, Any], required: list[str]) -> BfclFunction:
    return BfclFunction("f", "", {"type": "dict", "properties": properties, "required": required})


def test_checker_rules() -> None:
    fn = _fn({"x": {"type": "float"}, "s": {"type": "string"}, "n": {"type": "integer"},
              "v": {"type": "array", "items": {"type": "float"}}}, ["x"])
    possible: dict[str, list[Any]] = {"x": [2.0], "s": ["April 1, 2024", ""], "n": [3, ""], "v": [[1.0, 2.5], ""]}

    def right(**args: Any) -> bool:
        return check_call(fn, FunctionCall("f", args), possible, check_name=True).correct

    assert right(x=2)  # int accepted for float
    assert right(x=2.0, s="april 1 2024")  # standardised string
    assert right(x=2.0, s="APRIL-1,2024")
    assert not right(x=2.0, s="April 2, 2024")
    assert not right(x=2.0, n=True)  # a boolean is not an integer
    assert not right(x=2.0, n=3.0)  # nor is a float
    assert right(x=2.0, v=[1.0, 2.5])
    assert right(x=2.0, v=[])  # the "" marker reads as an empty list
    assert not right(x=2.0, v=[2.5, 1.0])  # order matters
    assert not right(x="2")
    assert not right()
    assert standardize("Don't  Stop_Me-Now.") == 'don"tstopmenow'


def test_checker_nested_float_ints_follow_official_rule() -> None:
    # the official checker converts int to float at the top level only
    fn = _fn({"v": {"type": "array", "items": {"type": "float"}}}, ["v"])
    verdict = check_call(fn, FunctionCall("f", {"v": [1, 2.5]}), {"v": [[1.0, 2.5]]}, check_name=True)
    assert not verdict.correct


def test_checker_dicts_and_lists_of_dicts() -> None:
    fn = _fn({"d": {"type": "dict", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}},
              "rows": {"type": "array", "items": {"type": "dict"}}}, ["d"])
    possible: dict[str, list[Any]] = {"d": [{"a": ["New York"], "b": [1, ""]}],
                "rows": [[{"k": ["x"]}, {"k": ["y"]}], ""]}

    def right(**args: Any) -> bool:
        return check_call(fn, FunctionCall("f", args), possible, check_name=True).correct

    assert right(d={"a": "new york"})
    assert right(d={"a": "New York", "b": 1})
    assert not right(d={"a": "New York", "b": 2})
    assert not right(d={"b": 1})
    assert not right(d={"a": "New York", "c": 1})
    assert right(d={"a": "NY".replace("NY", "new york")}, rows=[{"k": "x"}, {"k": "Y"}])
    assert not right(d={"a": "new york"}, rows=[{"k": "y"}, {"k": "x"}])
    assert not right(d={"a": "new york"}, rows=[{"k": "x"}])


# ----------------------------------------------------------------- task


def test_conditions_and_prompts(task: BfclSimpleTask, items: list[Item]) -> None:
    assert [c.key for c in task.conditions()] == [
        "unconstrained", "prompt_only[arguments]", "constrained[arguments]@llguidance",
        "reason_then_constrain[arguments]@llguidance"]
    item = items[0]
    schema = task.contract_schema(item, CONSTRAINED)
    assert schema == parameters_schema(item_function(item))
    shown = json.dumps(schema, indent=2)
    assert task.prompt(item, PROMPT_ONLY) == task.prompt(item, CONSTRAINED)
    json_text = task.prompt(item, CONSTRAINED).messages[0].content
    free_text = task.prompt(item, FREE).messages[0].content
    assert shown in json_text and shown in free_text
    assert "Python syntax" in free_text and "Python" not in json_text
    assert item.input["question"] in json_text and item.input["question"] in free_text
    packaging = task.packaging_prompt(item, PACKAGED, "calculate_triangle_area(base=10, height=5)")
    assert [m.role for m in packaging.messages] == ["user", "assistant", "user"]
    assert shown in packaging.messages[2].content


def test_score_reference_answers_in_every_arm(task: BfclSimpleTask, items: list[Item]) -> None:
    for item in items:
        name = item_function(item).name
        reference = _reference(item, minimal=False)
        json_score = task.score(item, CONSTRAINED, json.dumps(reference), truncated=False)
        assert json_score.correct, (item.id, json_score.note)
        assert json_score.valid is (item.id not in SCHEMA_EXCLUSIONS)
        free_score = task.score(item, FREE, _python_call(name, reference), truncated=False)
        assert free_score.correct and free_score.valid is None, (item.id, free_score.note)


def test_score_examples(task: BfclSimpleTask, items: list[Item]) -> None:
    item = items[0]
    cases = [
        (FREE, "calculate_triangle_area(base=10, height=5)", True),
        (FREE, "```python\ncalculate_triangle_area(base=10, height=5, unit='units')\n```", True),
        (FREE, "I'll call calculate_triangle_area(base=10, height=5).", True),
        (FREE, "[calculate_triangle_area(base=10, height=5)]", True),
        (FREE, "calculate_triangle_area(10, 5)", False),
        (FREE, "triangle_area(base=10, height=5)", False),
        (FREE, "calculate_triangle_area(base=10, height=6)", False),
        (CONSTRAINED, '{"base": 10, "height": 5}', True),
        (CONSTRAINED, '{"base": 10, "height": 5, "unit": "Units"}', True),
        (CONSTRAINED, '{"base": 10.0, "height": 5}', False),
        (CONSTRAINED, '{"base": 10}', False),
        (CONSTRAINED, '{"type": "object", "properties": {}}', False),
        (CONSTRAINED, "[10, 5]", False),
    ]
    for condition, text, correct in cases:
        assert task.score(item, condition, text, truncated=False).correct is correct, text
    scored = task.score(item, CONSTRAINED, '{"base": 10}', truncated=False)
    assert scored.valid is False and scored.note == "missing required parameter 'height'"
    assert scored.answer == {"name": "calculate_triangle_area", "arguments": {"base": 10}}


def test_score_never_raises_nor_evaluates(task: BfclSimpleTask, items: list[Item], tmp_path: Path) -> None:
    target = tmp_path / "pwned"
    texts = ["", "\x00", "\ud800", "(" * 100_000, "[" * 100_000,
             f"__import__('os').system('touch {target}')",
             f"calculate_triangle_area(base=__import__('os').system('touch {target}'))",
             "calculate_triangle_area(base=" + "9" * 4000 + ", height=5)",
             '{"base": ' * 50_000, "calculate_triangle_area(" * 20_000]
    for condition in (FREE, PROMPT_ONLY, CONSTRAINED, PACKAGED):
        for text in texts:
            scored = task.score(items[0], condition, text, truncated=False)
            assert scored.correct is False
            assert scored.note is None or not scored.note.startswith("scoring error"), scored.note
    assert not target.exists()


def test_item_targets_are_not_shared(items: list[Item]) -> None:
    # scoring must not mutate the possible answers it is given
    before = copy.deepcopy([i.target for i in items])
    task = tasks.get("bfcl-simple")(TaskOptions())
    for item in items[:50]:
        task.score(item, CONSTRAINED, json.dumps(_reference(item, minimal=True)), truncated=False)
    assert [i.target for i in items] == before


# ----------------------------------------------------------------- engines (slow)

#: items with the unusual parameter shapes: tuple, list of dicts, any,
#: nested arrays, dict items without required, dict without properties
UNUSUAL = ["simple_83", "simple_96", "simple_109", "simple_122", "simple_335", "simple_337"]


@pytest.mark.long
@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama_cpp is not importable")
def test_engines_compile_every_converted_schema(task: BfclSimpleTask, items: list[Item]) -> None:
    from conformbench.backends.llamacpp.backend import LlamaCppBackend
    from conformbench.records.generation import BackendConfig, Constraint

    backend = LlamaCppBackend(BackendConfig())
    try:
        for engine in ("llguidance", "gbnf", "outlines"):
            # outlines builds an index per schema (slow): its share is the unusual shapes
            chosen = items if engine != "outlines" else [i for i in items if i.id in UNUSUAL]
            for item in chosen:
                schema = task.contract_schema(item, CONSTRAINED)
                assert schema is not None
                backend.compile(Constraint(schema=schema, engine=engine))
    finally:
        backend.close()
