"""An arm's policy walked over one item by hand, as the runner walks it,
with the model's answers given: what each turn asks (its kind, prompt,
grammar, budget), the verdict the task's scorer gives each answer, and
whether the policy stops. For testing an arm without a model."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from conformbench.errors import UsageError
from conformbench.records.generation import DEFAULT_THINK_STOP, DecodingSettings
from conformbench.records.rounds import TurnOutcome, TurnPlan
from conformbench.records.spec import DEFAULT_MAX_ROUNDS
from conformbench.registry import did_you_mean
from conformbench.runner.turns import outcome_of
from conformbench.runner.units import UnitContext, WorkUnit, plan_task
from conformbench.tasks.base import Task

__all__ = ["PolicyWalk", "walk_policy"]


@dataclass(frozen=True)
class PolicyWalk:
    """The turns taken, one per answer given, and the turn the policy asks
    for next (None: it stopped)."""

    turns: tuple[TurnOutcome, ...]
    next: TurnPlan | None

    @property
    def stopped(self) -> bool:
        return self.next is None


def walk_policy(task: Task, condition: str, answers: Sequence[str], *, item: int = 0,
                finish_reason: str = "stop", settings: DecodingSettings | None = None,
                max_rounds: int = DEFAULT_MAX_ROUNDS, think_stop: str = DEFAULT_THINK_STOP) -> PolicyWalk:
    """Walk the policy of ``condition`` (a condition key of ``task``, as
    ``repair[answer]`` or ``constrained[answer]@llguidance``) over the
    task's ``item``-th item: each turn it asks is answered with the next of
    ``answers`` (ending with ``finish_reason``), until it stops or the
    answers run out. The turns are planned, judged and numbered by the
    runner's own code, so what passes here is what a run does."""
    plan = plan_task(task, settings or DecodingSettings(), max_rounds=max_rounds, think_stop=think_stop)
    keys = [c.key for c in plan.conditions]
    if condition not in keys:
        raise UsageError(f"task {task.name} has no condition {condition!r}{did_you_mean(condition, keys)}; "
                         f"known: {', '.join(keys)}")
    if not 0 <= item < len(plan.items):
        raise UsageError(f"task {task.name} has {len(plan.items)} items; item {item} is not one of them")
    cond = plan.conditions[keys.index(condition)]
    unit = WorkUnit(task.name, "walk", plan.items[item], cond)
    ctx = UnitContext(plan, unit)
    turns: list[TurnOutcome] = []
    for text in answers:
        turn = unit.arm.decide(ctx, tuple(turns))
        if turn is None:
            break
        turns.append(outcome_of(plan, unit, turn, text, finish_reason))
    return PolicyWalk(tuple(turns), unit.arm.decide(ctx, tuple(turns)))
