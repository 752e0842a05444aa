"""Growing a finished run: the same spec with a larger ``n`` for some tasks,
more samples, larger token budgets, or more arms, engines or formats
(``ledger.grow_grid``), or several of these.

A replay's header holds the spec it was made under, and a resumed run must
match it. Two changes keep every recorded generation meaningful:

* **more items** of the same tasks: the items already run are the first
  ones of the larger set, so their generations are reused and only the new
  items are generated. That is checked on the items themselves (each
  recorded item must be identical to the planned item with its id), not
  assumed from the spec, because a task's item order could depend on ``n``.
* **more samples** (``[decoding] samples``): the recorded samples are
  reused and only the new sample indices are generated.
* **larger budgets** for some turns: a generation that ended before its old
  budget (on its own, at a stop string, or by the loop stop) is the same
  under a larger one (the loop stop looks only at the text written so far),
  so only the answers the old budget cut are generated again, and two-turn
  answers whose free turn may have been cut. The new record supersedes the
  old one (the reader keeps the last record of a key).
* **more conditions** (arms, engines, formats, shots; ``ledger.grow_grid``):
  the recorded conditions' generations are reused and only the new
  conditions' are generated.

The header is then rewritten (``ledger.header``) with the larger spec and a
note of the change in ``grown``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from conformbench.arms.base import arms
from conformbench.records.generation import Turn, TurnBudgets
from conformbench.records.replay import GenerationRecord, StepCost, sample_key
from conformbench.records.replay_file import ReplayContents
from conformbench.records.spec import ReplaySpec
from conformbench.runner.ledger.content import check_items, planned_items
from conformbench.runner.ledger.grow_grid import GridGrowth, grid_growth
from conformbench.runner.ledger.header import rewrite_header, stamped
from conformbench.runner.ledger.key import GenerationKey
from conformbench.runner.units import TaskPlan, WorkUnit, answer_turns

__all__ = ["Growth", "grow_replay", "spec_growth"]

_TURNS: tuple[Turn, ...] = ("free", "json", "packaging", "think")
Key = tuple[str, str, str, str]


@dataclass
class Growth:
    """What a larger spec adds to a recorded run."""

    #: {task: (old n, new n)}
    n: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: {task: (old budgets, new budgets)}, tasks where some turn's budget rose
    budgets: dict[str, tuple[TurnBudgets, TurnBudgets]] = field(default_factory=dict)
    #: recorded generations to generate again (the old budget may have cut them)
    redo: set[Key] = field(default_factory=set)
    #: (old samples, new samples) where ``[decoding] samples`` rose
    samples: tuple[int, int] | None = None
    #: {task: what its larger grid adds}, tasks given new conditions
    grid: dict[str, GridGrowth] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.n or self.budgets or self.samples or self.grid)

    def notes(self) -> list[str]:
        lines = [f"task {name!r} n {a} -> {b}" for name, (a, b) in sorted(self.n.items())]
        if self.samples:
            lines.append(f"samples {self.samples[0]} -> {self.samples[1]}")
        for name, (old, new) in sorted(self.budgets.items()):
            turns = ", ".join(f"{t} {old.of(t)} -> {new.of(t)}" for t in _TURNS if old.of(t) != new.of(t))
            lines.append(f"task {name!r} budgets {turns}")
        lines += [grid.note(name) for name, grid in sorted(self.grid.items())]
        return lines


def spec_growth(old: ReplaySpec, new: ReplaySpec, plans: list[TaskPlan]) -> Growth:
    """How ``new`` grows ``old`` (``plans`` are ``new``'s, in task order);
    empty when the specs differ in any other way, or n, a budget or the
    conditions shrink."""
    if (GenerationKey.of(old).without_growth().without_grid(old)
            != GenerationKey.of(new).without_growth().without_grid(old)):
        return Growth()
    grid = grid_growth(old, new, plans)
    if grid is None:
        return Growth()  # a recorded condition left out
    growth = Growth(grid=grid)
    samples = (old.decoding.samples, new.decoding.samples)
    if samples[1] < samples[0]:
        return Growth()  # fewer samples
    growth.samples = samples if samples[1] > samples[0] else None
    for before, after, plan in zip(old.tasks, new.tasks, plans, strict=True):
        if before.n != after.n:
            if before.n is None or after.n is None or after.n < before.n:
                return Growth()  # fewer items, or an unbounded side
            growth.n[after.name] = (before.n, after.n)
        was = before.budgets(old.decoding, plan.task.default_budgets)
        if any(plan.budgets.of(t) < was.of(t) for t in _TURNS):
            return Growth()
        if plan.budgets != was and any(arms.get(c.arm).rounds or arms.get(c.arm).thinks
                                       for c in plan.conditions):
            return Growth()  # a redone round would leave the later rounds built on the old answer
        if plan.budgets != was:
            growth.budgets[after.name] = (was, plan.budgets)
    return growth


def _ended_at(gen: GenerationRecord, budget: int) -> bool:
    """Whether the generation ran to ``budget``: cut there, or found in a
    loop by the check the decoder also runs on the budget's last token (off
    its usual cadence, a larger budget checks later and the text grows)."""
    return gen.finish_reason == "length" or (gen.finish_reason == "loop" and gen.completion_tokens >= budget)


def _maybe_cut(gen: GenerationRecord, old: TurnBudgets, new: TurnBudgets,
               by_key: dict[Key, GenerationRecord], plan: TaskPlan) -> bool:
    """Whether a larger budget could change this recorded generation: the
    budget of its answer's turn grew and cut it, or that of the step before
    its answer (reason_then_constrain's free turn) grew, as its arm's
    policy plans them."""
    item = next((i for i in plan.items if i.id == gen.item_id), plan.items[0])
    step, answer = answer_turns(plan, WorkUnit(gen.task, gen.model, item, gen.condition), "")
    final = answer.budget
    if new.of(final) > old.of(final) and _ended_at(gen, old.of(final)):
        return True
    if step is None or new.of(step.budget) == old.of(step.budget):
        return False
    source = plan.shares_first.get(gen.condition.key)
    if source is None:  # its own free turn: its end is recorded in ``step`` (not before steps' costs were)
        return gen.step is None or _step_ended_at(gen.step, old.of(step.budget))
    reused = by_key.get((gen.task, gen.model, gen.item_id, sample_key(source.key, gen.sample)))
    return reused is None or _ended_at(reused, old.of(step.budget))


def _step_ended_at(step: StepCost, budget: int) -> bool:
    """``_ended_at`` for a free step as its answer records it (a failed step: redone too)."""
    return step.finish_reason in ("length", "error") or (step.finish_reason == "loop"
                                                         and step.completion_tokens >= budget)


def _redo(contents: ReplayContents, growth: Growth, plans: list[TaskPlan]) -> set[Key]:
    by_key = {g.key: g for g in contents.generations}
    by_task = {p.task.name: p for p in plans}
    redo: set[Key] = set()
    for gen in contents.generations:
        if gen.task in growth.budgets and gen.finish_reason not in ("error", "excluded"):
            old, new = growth.budgets[gen.task]
            if _maybe_cut(gen, old, new, by_key, by_task[gen.task]):
                redo.add(gen.key)
    return redo


def grow_replay(contents: ReplayContents, new_spec: ReplaySpec,
                plans: list[TaskPlan]) -> Growth:
    """If ``new_spec`` only grows the replay's spec (n, samples, budgets,
    conditions), check every recorded item against ``plans``, rewrite the
    header of ``contents`` (in place) to ``new_spec`` and return the growth
    with the generations to redo; otherwise change nothing and return an
    empty Growth."""
    growth = spec_growth(contents.header.spec, new_spec, plans)
    if not growth:
        return growth
    check_items(contents, planned_items(plans), "the larger run")
    growth.redo = _redo(contents, growth, plans)
    header = contents.header
    rewrite_header(contents, header.model_copy(
        update={"spec": new_spec, "grown": [*header.grown, *stamped(growth.notes())]}))
    return growth
