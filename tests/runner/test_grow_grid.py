"""What a grid growth may change besides the grid: the recipes of arms the
recorded run did not name, and the round limit a run without a multi-round
arm did not record (the runs themselves: test_grow_arms.py)."""

from __future__ import annotations

import copy
from typing import Any

from conformbench.records.spec import ReplaySpec
from conformbench.runner.ledger import GenerationKey

RECIPE = {"policy": "conformbench.arms.multi_round:repair", "arguments": {"feedback": "tests:terse"}}


def _spec(arms: list[str], recipes: dict[str, Any], max_rounds: int | None = None) -> ReplaySpec:
    return ReplaySpec.model_validate({"models": [{"label": "m"}],
                                      "tasks": [{"name": "gsm8k", "arms": arms, "engines": ["llguidance"], "n": 2}],
                                      "decoding": {"max_rounds": max_rounds}, "arms": recipes})


def without_grid(spec: ReplaySpec, old: ReplaySpec) -> GenerationKey:
    return GenerationKey.of(spec).without_grid(old)


def test_a_new_arms_recipe_and_round_limit_are_part_of_the_growth() -> None:
    old = _spec(["prompt_only"], {})
    new = _spec(["prompt_only", "terse"], {"terse": RECIPE}, max_rounds=3)
    assert without_grid(new, old) == without_grid(old, old)


def test_a_recorded_arms_recipe_or_round_limit_may_not_change() -> None:
    old = _spec(["terse"], {"terse": RECIPE}, max_rounds=3)
    other = copy.deepcopy(RECIPE)
    other["arguments"]["feedback"] = "tests:verbose"
    assert without_grid(_spec(["terse", "x"], {"terse": other}, 3), old) != without_grid(old, old)
    assert without_grid(_spec(["terse", "x"], {"terse": RECIPE}, 4), old) != without_grid(old, old)
    assert without_grid(_spec(["terse", "x"], {}, 3), old) != without_grid(old, old)
    assert without_grid(_spec(["terse", "x"], {"terse": RECIPE}, 3), old) == without_grid(old, old)
    kept = without_grid(old, old).spec
    assert (kept.tasks[0].arms, kept.tasks[0].engines, kept.tasks[0].n) == ([], [], 2)
    assert kept.decoding.max_rounds == 3 and kept.arms["terse"].model_dump() == RECIPE


def test_the_note_names_an_empty_list_as_the_tasks_defaults() -> None:
    """An empty list in a header is the task's defaults: a growth from it to
    an explicit list adds only what the defaults lacked, so the note shows
    both lists, never "added" for arms the recorded run had by default."""
    from conformbench.runner.ledger.grow_grid import GridGrowth

    growth = GridGrowth([("arms", [], ["unconstrained", "constrained", "think_then_constrain"])],
                        ["think_then_constrain[answer]@llguidance"])
    note = growth.note("gsm8k")
    assert "added" not in note, note
    assert note == ("task 'gsm8k' arms (the task's defaults) -> [\"unconstrained\", \"constrained\", "
                    "\"think_then_constrain\"] (1 new condition)")
    assert GridGrowth([("engines", ["llguidance"], ["llguidance", "xgrammar"])], ["a", "b"]).note("t") == (
        "task 't' engines added: xgrammar (2 new conditions)")
