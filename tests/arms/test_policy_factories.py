"""The loops are policy factories: what they were called with is their
recipe (functions by module:qualname, defaults left out), the built-in arms
are the factories with their defaults, and bad arguments fail at once."""

from __future__ import annotations

import pytest

from conformbench.arms import Recipe, Verdict, fallback, made, repair, resample
from conformbench.arms.base import arms


def _words(verdict: Verdict, format_name: str) -> str:
    return f"again, {format_name}"


def test_a_factorys_arguments_are_its_recipe() -> None:
    assert repair().recipe == Recipe("repair")
    assert repair(feedback=_words, max_rounds=2).recipe.as_json() == {
        "policy": "repair", "arguments": {"feedback": f"{__name__}:_words", "max_rounds": 2}}
    assert resample(temperature=0.3).recipe.as_json() == {"policy": "resample", "arguments": {"temperature": 0.3}}
    assert fallback().recipe == Recipe("fallback")


def test_the_built_in_arms_are_the_factories_with_their_defaults() -> None:
    for name in ("repair", "resample", "fallback"):
        assert arms.get(name).recipe == Recipe(name), name
    assert arms.get("prompt_only").recipe is None  # the one-turn policy
    recipe = arms.get("think_then_constrain").recipe
    assert recipe == Recipe("conformbench.arms.think:think_then_constrain")


def test_bad_arguments_fail_when_the_policy_is_made() -> None:
    with pytest.raises(ValueError, match="max_rounds must be 1 or more, not 0"):
        repair(max_rounds=0)
    with pytest.raises(TypeError, match="plain data or a function, not list"):
        made("mine", lambda ctx, turns: None, steps=[1, 2])
