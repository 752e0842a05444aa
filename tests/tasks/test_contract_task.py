"""ContractTask machinery: arm specs, options, execution hook, safe scoring.
Uses a tiny real subclass (the generic machinery is what is tested here; the
built-in tasks are tested in their own modules)."""

from __future__ import annotations

import typing
from typing import ClassVar, Literal

import pytest

from conformbench.errors import UsageError
from conformbench.jsontypes import JSONValue, Schema
from conformbench.records.items import Condition, Item, TaskOptions
from conformbench.tasks.base import Task, tasks
from conformbench.tasks.contract_task import ContractTask, PromptStyleOptions
from conformbench.tasks.grid import TaskParams

FREE = Condition("unconstrained")
CONSTRAINED = Condition("constrained", "answer", "llguidance")


class _Sum(ContractTask):
    """Two numbers to add; the execution check re-adds them."""

    name = "sum-test"
    known_params = ("digits",)
    schemas: ClassVar[dict[str, Schema]] = {"answer": {
        "type": "object", "properties": {"answer": {"type": "integer"}},
        "required": ["answer"], "additionalProperties": False}}

    def load_items(self) -> list[Item]:
        return [Item(id=f"s{i}", input={"question": f"{i} + {i}?", "a": i}, target=2 * i)
                for i in range(3)]

    def free_prompt(self, item: Item) -> str:
        return str(item.input["question"])

    def extract_free(self, item: Item, text: str) -> JSONValue:
        return int(text) if text.strip().isdigit() else None

    def is_correct(self, item: Item, answer: JSONValue) -> bool:
        return bool(answer == item.target)

    def execute(self, item: Item, answer: JSONValue) -> bool | None:
        if answer == -1:
            raise RuntimeError("boom")
        return answer is not None and answer == item.input["a"] * 2


class _Broken(_Sum):
    name = "broken-test"

    def is_correct(self, item: Item, answer: JSONValue) -> bool:
        raise KeyError("bug in a checker")


def test_defaults_from_schemas() -> None:
    assert _Sum.contracts == ("answer",)
    assert _Sum.answer_contract == "answer"
    assert Task.execute(_Sum(TaskOptions()), Item("x", {}), 1) is None  # base default


def test_items_first_n() -> None:
    assert [i.id for i in _Sum(TaskOptions(n=2)).items()] == ["s0", "s1"]
    assert _Sum(TaskOptions(n=0)).items() == []
    with pytest.raises(UsageError, match="n must be 0 or more"):
        _Sum(TaskOptions(n=-1))


def test_params_and_arm_specs() -> None:
    assert _Sum(TaskOptions(params={"digits": 2})).options.params == {"digits": 2}
    with pytest.raises(UsageError, match="did you mean 'digits'"):
        _Sum(TaskOptions(params={"digit": 2}))
    task = _Sum(TaskOptions(arms=("reason_then_constrain", " prompt_only[answer] ",
                                  "constrained[answer]", "constrained"), engines=("a", "b")))
    assert [c.key for c in task.conditions()] == [
        "reason_then_constrain[answer]@a", "reason_then_constrain[answer]@b",
        "prompt_only[answer]", "constrained[answer]@a", "constrained[answer]@b"]
    for bad in ("constrained[", "[answer]", "constrained[a][b]"):
        with pytest.raises(UsageError, match="bad arm"):
            _Sum(TaskOptions(arms=(bad,))).conditions()
    with pytest.raises(UsageError, match="no axis chosen by 'shots'"):
        _Sum(TaskOptions(axes={"shots": (0, 3)}))


def test_execution_hook_fills_executable() -> None:
    task = _Sum(TaskOptions())
    item = task.items()[2]
    assert task.score(item, FREE, "4", False).executable is True
    assert task.score(item, FREE, "5", False).executable is False
    assert task.score(item, FREE, "nothing", False).executable is False
    assert task.score(item, CONSTRAINED, '{"answer": 4}', False).executable is True
    raised = task.score(item, CONSTRAINED, '{"answer": -1}', False)
    assert raised.executable is False and raised.note is not None and "boom" in raised.note


def test_a_checker_bug_is_recorded_not_raised() -> None:
    task = _Broken(TaskOptions())
    item = task.items()[0]
    scored = task.score(item, CONSTRAINED, '{"answer": 0}', truncated=True)
    assert scored.correct is False and scored.valid is False and scored.truncated is True
    assert scored.note is not None and scored.note.startswith("scoring error: KeyError")


class _Styled(_Sum):
    name = "styled-test"
    prompt_styles = ("plain", "fancy")


def test_prompt_styles_make_a_prompt_style_options_model() -> None:
    model = _Styled.options_model
    assert model is not None and issubclass(model, PromptStyleOptions)
    assert model.model_fields["prompt_style"].annotation == Literal["plain", "fancy"]
    assert _Styled(TaskOptions()).prompt_style == "plain"
    assert _Styled(TaskOptions(params={"prompt_style": "fancy"})).prompt_style == "fancy"
    with pytest.raises(UsageError, match="option prompt_style: .*'fancee'; did you mean 'fancy'"):
        _Styled(TaskOptions(params={"prompt_style": "fancee"}))
    assert _Sum(TaskOptions()).prompt_style == ""  # a task that offers no styles


@pytest.mark.parametrize("name", ["gsm8k", "bfcl-simple"])
def test_the_shipped_styled_tasks_declare_prompt_style(name: str) -> None:
    model = tasks.get(name).options_model
    assert model is not None and issubclass(model, PromptStyleOptions)
    assert typing.get_args(model.model_fields["prompt_style"].annotation) == ("conformbench", "validbutwrong")


def test_an_own_options_model_with_prompt_styles_derives_prompt_style_options() -> None:
    class Own(PromptStyleOptions):
        prompt_style: Literal["a", "b"] = "b"

    class OwnStyled(_Sum):
        prompt_styles = ("a", "b")
        options_model = Own

    assert OwnStyled(TaskOptions()).prompt_style == "b"
    with pytest.raises(TypeError, match="options model must derive from PromptStyleOptions"):
        class Unstyled(_Sum):
            prompt_styles = ("a", "b")
            options_model = TaskParams
