"""Work-unit order and batching."""

from __future__ import annotations

from dataclasses import replace

from conformbench.records.generation import DecodingSettings, TurnBudgets
from conformbench.records.items import Condition, Item, ItemScore, TaskOptions
from conformbench.records.prompt import Message, Prompt
from conformbench.records.rounds import TurnKind
from conformbench.runner.units import WorkUnit, chunks, final_request, first_turn, plan_task
from conformbench.tasks.base import Task


class _GridTask(Task):
    """Two format cells, each with the four arms, listed arm-major."""

    name = "grid"

    def items(self) -> list[Item]:
        return [Item("a", {}), Item("b", {})]

    def conditions(self) -> list[Condition]:
        out = []
        for arm, contract, engine in (("reason_then_constrain", "s", "e"), ("constrained", "s", "e"),
                                      ("prompt_only", "s", None), ("unconstrained", None, None)):
            for cell in ("json", "yaml"):
                out.append(Condition.of(arm, contract, engine, {"schema_format": cell, "output_format": "json", "shots": 0}))
        return out

    def turn_prompt(self, item: Item, condition: Condition, kind: TurnKind) -> Prompt:
        return Prompt((Message("user", f"{item.id} {condition.axis('schema_format')}"),))

    def turn_stops(self, item: Item, condition: Condition, kind: TurnKind) -> tuple[str, ...]:
        return ("\n\n", f"<{item.id}>") if kind == "ask" else ()

    def contract_schema(self, item: Item, condition: Condition) -> dict[str, object] | None:
        return {"type": "string"} if condition.contract else None

    def packaging_prompt(self, item: Item, condition: Condition, free_text: str) -> Prompt:
        return Prompt((Message("user", free_text),))

    def score(self, item: Item, condition: Condition, text: str, truncated: bool) -> ItemScore:
        return ItemScore(valid=None, correct=None)


def _plan() -> list[WorkUnit]:
    return plan_task(_GridTask(TaskOptions()), DecodingSettings()).units("m")


def test_an_arm_whose_first_turn_is_anothers_follows_it() -> None:
    plan = plan_task(_GridTask(TaskOptions()), DecodingSettings())
    units = plan.units("m")
    first = [(u.condition.arm, u.condition.axis("schema_format")) for u in units if u.item.id == "a"]
    assert first == [
        ("constrained", "json"), ("constrained", "yaml"), ("prompt_only", "json"),
        ("prompt_only", "yaml"), ("unconstrained", "json"), ("reason_then_constrain", "json"),
        ("unconstrained", "yaml"), ("reason_then_constrain", "yaml"),
    ]
    # reason_then_constrain's free step is its own cell's unconstrained answer
    assert {key: c.key for key, c in plan.shares_first.items()} == {
        "json->json/0shot/reason_then_constrain[s]@e": "json->json/0shot/unconstrained",
        "yaml->json/0shot/reason_then_constrain[s]@e": "yaml->json/0shot/unconstrained"}
    rtc = [u for u in units if u.condition.arm == "reason_then_constrain"]
    assert all(first_turn(plan, u) == first_turn(plan, replace(u, condition=plan.shares_first[u.condition.key]))
               for u in rtc)
    assert [u.item.id for u in units] == ["a"] * 8 + ["b"] * 8


def test_batches_keep_the_order() -> None:
    units = _plan()
    batches = chunks(units, 4)
    assert [u for b in batches for u in b] == units  # order kept, nothing lost
    assert all(1 <= len(b) <= 4 for b in batches)
    assert [len(b) for b in chunks(units, 1)] == [1] * 16


def test_task_stops_follow_the_runs_own_once_each() -> None:
    plan = plan_task(_GridTask(TaskOptions()), DecodingSettings(stop=("\n\n", "END")), TurnBudgets(5, 7, 9))
    by_arm = {(u.item.id, u.condition.arm): final_request(plan, u, None).settings
              for u in plan.units("m") if u.condition.arm in ("prompt_only", "unconstrained")}
    assert by_arm[("b", "prompt_only")].stop == ("\n\n", "END", "<b>")
    assert by_arm[("b", "prompt_only")].max_tokens == 7
    assert by_arm[("a", "unconstrained")].stop == ("\n\n", "END")
    # each turn spends its own budget: the answer turn 7, the free turn 5
    assert by_arm[("a", "unconstrained")].max_tokens == 5


def test_each_turn_takes_its_own_budget() -> None:
    plan = plan_task(_GridTask(TaskOptions()), DecodingSettings(), TurnBudgets(free=5, json=7, packaging=9))
    assert plan_task(_GridTask(TaskOptions()), DecodingSettings()).budgets == TurnBudgets(384, 384, 384)
    seen = {}
    for unit in plan.units("m"):
        if unit.condition.arm == "reason_then_constrain":
            seen["free"] = first_turn(plan, unit).settings.max_tokens
            seen["packaging"] = final_request(plan, unit, "free text").settings.max_tokens
        elif unit.condition.arm == "constrained":
            seen["json"] = final_request(plan, unit, None).settings.max_tokens
    assert seen == {"free": 5, "json": 7, "packaging": 9}
