"""One expansion makes every task's grid (axes × arms × contracts ×
engines), and one check reads every task's options from its declarations."""

from __future__ import annotations

from typing import ClassVar, Literal

import pytest
from pydantic import BaseModel, Field

from conformbench.errors import UsageError
from conformbench.records.items import Condition, Item, ItemScore, TaskOptions
from conformbench.records.prompt import Prompt
from conformbench.records.rounds import TurnKind
from conformbench.tasks.base import Task, tasks
from conformbench.tasks.grid import Axis, TaskParams


class _Options(TaskParams):
    tone: list[Literal["plain", "pirate"]] = Field(["plain"], description="tones")
    repeat: int = Field(1, ge=1, le=3, description="times")


class _Toned(Task):
    name = "toned-test"
    contracts = ("answer",)
    answer_contract = "answer"
    default_arms = ("unconstrained", "constrained")
    options_model: ClassVar[type[BaseModel] | None] = _Options
    axes = (Axis("tone", "tone"),)

    def items(self) -> list[Item]:
        return [Item(id="a", input={})]

    def turn_prompt(self, item: Item, condition: Condition, kind: TurnKind) -> Prompt:
        raise NotImplementedError

    def score(self, item: Item, condition: Condition, text: str, truncated: bool) -> ItemScore:
        return ItemScore(valid=None, correct=None)


def test_a_tasks_own_axis_multiplies_its_grid() -> None:
    task = _Toned(TaskOptions(params={"tone": ["pirate", "plain"]}, engines=("llguidance", "xgrammar")))
    assert [c.key for c in task.conditions()] == [
        "tone=pirate/unconstrained", "tone=pirate/constrained[answer]@llguidance",
        "tone=pirate/constrained[answer]@xgrammar", "tone=plain/unconstrained",
        "tone=plain/constrained[answer]@llguidance", "tone=plain/constrained[answer]@xgrammar"]
    default = _Toned(TaskOptions(engines=("llguidance",)))  # the model's default choice of tones
    assert [c.key for c in default.conditions()] == ["tone=plain/unconstrained", "tone=plain/constrained[answer]@llguidance"]


def test_options_are_checked_by_the_model_in_one_line() -> None:
    with pytest.raises(UsageError, match=r"option tone\.0: .*'pirat'; did you mean 'pirate'"):
        _Toned(TaskOptions(params={"tone": ["pirat"]}))
    with pytest.raises(UsageError, match="option repeat: Input should be less than or equal to 3"):
        _Toned(TaskOptions(params={"repeat": 4}))
    with pytest.raises(UsageError, match=r"has no option 'tones' \(did you mean 'tone'\?\); known: tone, repeat"):
        _Toned(TaskOptions(params={"tones": ["plain"]}))
    assert _Toned(TaskOptions(params={"repeat": 2})).task_params == _Options(repeat=2)


def test_a_task_without_the_concodeeval_axes_refuses_their_options() -> None:
    with pytest.raises(UsageError, match=r"toned-test has no axis chosen by 'schema_formats'; its axes: tone \(by tone\)"):
        _Toned(TaskOptions(axes={"schema_formats": ("json",)}))
    with pytest.raises(UsageError, match="has no axis chosen by 'shots'"):
        _Toned(TaskOptions(axes={"shots": (3,)}))
    with pytest.raises(UsageError, match="takes no few-shot examples"):
        _Toned(TaskOptions(shots_from="zero-shot.jsonl"))


def test_a_mistyped_axis_key_is_told_the_right_one() -> None:
    """``TaskOptions.axes`` is checked against the axes the task declares."""
    with pytest.raises(UsageError, match=r"no axis chosen by 'schema_format' \(did you mean 'schema_formats'\?\)"):
        tasks.create("generation", TaskOptions(axes={"schema_format": ("json",)}))
    with pytest.raises(UsageError, match="shots: expected int values, not '3'"):
        tasks.create("generation", TaskOptions(axes={"shots": ("3",)}))


def test_both_families_expand_through_the_same_grid() -> None:
    validation = tasks.create("validation", TaskOptions(
        axes={"schema_formats": ("json", "yaml"), "output_formats": ("json",), "shots": (0, 2)},
        arms=("unconstrained", "constrained"), engines=("llguidance",)))
    assert [c.key for c in validation.conditions()] == [
        "json->json/0shot/unconstrained", "json->json/0shot/constrained[answer]@llguidance",
        "json->json/2shot/unconstrained", "json->json/2shot/constrained[answer]@llguidance",
        "yaml->json/0shot/unconstrained", "yaml->json/0shot/constrained[answer]@llguidance",
        "yaml->json/2shot/unconstrained", "yaml->json/2shot/constrained[answer]@llguidance"]
    gsm8k = tasks.create("gsm8k", TaskOptions(arms=("constrained[answer]",), engines=("llguidance",)))
    assert [c.key for c in gsm8k.conditions()] == ["constrained[answer]@llguidance"]
    assert tasks.get("gsm8k").option_names() == ("prompt_style",)
    assert tasks.get("generation").option_names() == ("prompt", "system")
