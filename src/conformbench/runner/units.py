"""Work units: one (model, task, item, condition) each, whose arm's policy
takes one or more turns, in a deterministic order that keeps the conditions
of one item together (so a backend's prompt cache is reused) and puts an arm
whose first turn is another's right after it; the context a policy asks
(``UnitContext``) and the request each turn makes."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, replace
from typing import Any

from conformbench.arms.base import Arm, arms
from conformbench.errors import UsageError
from conformbench.records.generation import (
    DEFAULT_THINK_STOP,
    Constraint,
    DecodingSettings,
    GenerationRequest,
    Thinking,
    Turn,
    TurnBudgets,
)
from conformbench.records.items import Condition, Item
from conformbench.records.prompt import Prompt
from conformbench.records.replay import sample_key
from conformbench.records.rounds import TurnKind, TurnOutcome, TurnPlan, Verdict
from conformbench.records.spec import DEFAULT_MAX_ROUNDS
from conformbench.records.tool_calls import ToolRequest, parse_tool_mode
from conformbench.tasks.base import Task

__all__ = [
    "TaskPlan",
    "UnitContext",
    "WorkUnit",
    "answer_turns",
    "chunks",
    "final_request",
    "first_plan",
    "first_turn",
    "plan_task",
    "request_fingerprint",
    "request_for",
]


@dataclass(frozen=True)
class WorkUnit:
    task: str
    model: str
    item: Item
    condition: Condition
    #: which of the run's samples of the item and condition (0: the first)
    sample: int = 0

    @property
    def key(self) -> tuple[str, str, str, str]:
        """The key of the unit's first answer (a later round adds its number)."""
        return (self.task, self.model, self.item.id, sample_key(self.condition.key, self.sample))

    @property
    def arm(self) -> Arm:
        return arms.get(self.condition.arm)


@dataclass(frozen=True)
class TaskPlan:
    task: Task
    items: list[Item]
    conditions: list[Condition]
    #: decoding settings of every turn but max_tokens, which comes from budgets
    settings: DecodingSettings
    budgets: TurnBudgets
    #: condition key -> the earlier condition whose first turn is the same
    #: request (generated once: reason_then_constrain's free step is the
    #: unconstrained answer, repair's first round prompt_only's)
    shares_first: dict[str, Condition]
    #: generations per item and condition (``[decoding] samples``)
    samples: int = 1
    #: answers a multi-round arm may give per item (``[decoding] max_rounds``)
    max_rounds: int = DEFAULT_MAX_ROUNDS
    #: the string that ends think_then_constrain's free text (``--think-stop``)
    think_stop: str = DEFAULT_THINK_STOP

    def units(self, model: str) -> list[WorkUnit]:
        """Item by item, each sample's conditions together (one sample:
        exactly the units of a run before samples existed)."""
        return [
            WorkUnit(self.task.name, model, item, cond, sample)
            for item in self.items
            for sample in range(self.samples)
            for cond in self.conditions
        ]


@dataclass(frozen=True)
class UnitContext:
    """The ``ArmContext`` a unit's policy asks (``conformbench.arms``)."""

    plan: TaskPlan
    unit: WorkUnit

    @property
    def item(self) -> Item:
        return self.unit.item

    @property
    def condition(self) -> Condition:
        return self.unit.condition

    @property
    def max_rounds(self) -> int:
        return self.plan.max_rounds

    @property
    def temperature(self) -> float:
        return self.plan.settings.temperature

    def _turn(self, kind: TurnKind, prompt: Prompt, **kw: Any) -> TurnPlan:
        """A turn of ``kind`` with the task's stops for that kind (the task
        is given the unit's own condition and the kind, never another arm's)."""
        stop = self.plan.task.turn_stops(self.item, self.condition, kind)
        return TurnPlan(prompt=prompt, kind=kind, stop=stop, **kw)

    def _prompt(self, kind: TurnKind) -> Prompt:
        return self.plan.task.turn_prompt(self.item, self.condition, kind)

    def free(self, step: bool = False) -> TurnPlan:
        return self._turn("free", self._prompt("free"), budget="free", answer=not step)

    def ask(self, grammar: bool = False) -> TurnPlan:
        kind: TurnKind = "constrained" if grammar else "ask"
        return self._turn(kind, self._prompt(kind), grammar=grammar, budget="json")

    def think(self) -> TurnPlan:
        prompt = self.plan.task.thinking_prompt(self.item, self.condition, self.plan.think_stop)
        return self._turn("think", prompt, grammar=True, budget="json", think=True)

    def call_tools(self) -> TurnPlan:
        return self._turn("tools", self._prompt("tools"), budget="json", tools=True)

    def package(self, free_text: str) -> TurnPlan:
        cond = self.condition
        return self._turn("package", self.plan.task.packaging_prompt(self.item, cond, free_text),
                          grammar=cond.engine is not None, budget="packaging")


def first_plan(plan: TaskPlan, unit: WorkUnit) -> TurnPlan | None:
    return unit.arm.decide(UnitContext(plan, unit), ())


def _first(plan: TaskPlan, cond: Condition) -> tuple[str | None, bool]:
    """The fingerprint of the condition's first turn on the first item, and
    whether that turn is a step (not an answer of the arm)."""
    unit = WorkUnit(plan.task.name, "", plan.items[0], cond)
    turn = first_plan(plan, unit)
    if turn is None:
        return None, False
    return request_fingerprint(request_for(plan, unit, turn)), not turn.answer


def _order(plan: TaskPlan) -> tuple[list[Condition], dict[str, Condition]]:
    """The task's order, each condition whose first turn (on the first item)
    is the same request as an earlier condition's moved right after it (the
    tokens are then still in the backend's prompt cache); a condition whose
    first turn is a step (reason_then_constrain's) comes after the answer
    it shares, or last."""
    if not plan.items:
        return list(plan.conditions), {}
    first = {c.key: _first(plan, c) for c in plan.conditions}
    ordered: list[Condition] = []
    shares: dict[str, Condition] = {}
    for cond in sorted(plan.conditions, key=lambda c: first[c.key][1]):  # stable: answers first
        print_ = first[cond.key][0]
        source = next((c for c in ordered if c.key not in shares and print_ is not None
                       and first[c.key][0] == print_), None)
        if source is None:
            ordered.append(cond)
            continue
        shares[cond.key] = source
        at = ordered.index(source) + 1
        while at < len(ordered) and shares.get(ordered[at].key) == source:
            at += 1
        ordered.insert(at, cond)
    return ordered, shares


def chunks(units: list[WorkUnit], size: int) -> list[list[WorkUnit]]:
    """Consecutive units in batches of at most ``size`` (a unit's turns are
    taken in steps, each step of a batch generated together)."""
    return [units[i:i + size] for i in range(0, len(units), size)]


def plan_task(task: Task, settings: DecodingSettings, budgets: TurnBudgets | None = None,
              samples: int = 1, max_rounds: int = DEFAULT_MAX_ROUNDS,
              think_stop: str = DEFAULT_THINK_STOP) -> TaskPlan:
    conditions = task.conditions()
    keys = [c.key for c in conditions]
    dupes = sorted({k for k in keys if keys.count(k) > 1})
    if dupes:
        raise UsageError(f"task {task.name} lists condition(s) twice: {', '.join(dupes)}")
    items = task.items()
    ids = [i.id for i in items]
    if len(set(ids)) != len(ids):
        raise UsageError(f"task {task.name} has duplicate item ids")
    plan = TaskPlan(task, items, conditions, settings, budgets or task.default_budgets, {}, samples,
                    max_rounds, think_stop)
    ordered, shares = _order(plan)
    return replace(plan, conditions=ordered, shares_first=shares)


def _constraint(task: Task, item: Item, cond: Condition, thinking: Thinking | None = None) -> Constraint:
    schema = task.contract_schema(item, cond)
    if schema is None or cond.engine is None:
        raise UsageError(
            f"task {task.name}: condition {cond.key} applies a grammar but has "
            "no contract schema or no engine"
        )
    return Constraint(schema=schema, engine=cond.engine, output_format=task.contract_form(item, cond),
                      thinking=thinking)


def _budgeted(plan: TaskPlan, turn: Turn, extra: tuple[str, ...]) -> DecodingSettings:
    settings = replace(plan.settings, max_tokens=plan.budgets.of(turn))
    if not extra:
        return settings
    return replace(settings, stop=tuple(dict.fromkeys([*settings.stop, *extra])))


def _seeded(settings: DecodingSettings, offset: int) -> DecodingSettings:
    """The settings of sample s (round r): the run's seed + s (+ the round's offset)."""
    return settings if offset == 0 else replace(settings, seed=settings.seed + offset)


def request_for(plan: TaskPlan, unit: WorkUnit, turn: TurnPlan) -> GenerationRequest:
    """The request a policy's turn makes: the run's settings with the turn's
    budget, stops, seed and temperature, the condition's grammar if asked."""
    settings = _seeded(_budgeted(plan, turn.budget, turn.stop), unit.sample + turn.seed_offset)
    if turn.temperature is not None:
        settings = replace(settings, temperature=turn.temperature)
    thinking = None
    if turn.think:  # one call: the thinking's budget, then the answer's
        thinking = Thinking(plan.think_stop, plan.budgets.of("think"))
        # the loop stop would end the call inside a looping thinking, with no
        # answer: the thinking's matcher cuts such a loop itself (engines/thinking_grammar.py)
        settings = replace(settings, max_tokens=thinking.tokens + settings.max_tokens, loop_stop=False)
    constraint = _constraint(plan.task, unit.item, unit.condition, thinking) if turn.grammar else None
    attend = _attend(plan, unit) if settings.attention and turn.answer else None
    tools = _tools(plan.task, unit) if turn.tools else None
    return GenerationRequest(prompt=turn.prompt, settings=settings, constraint=constraint, attend=attend, tools=tools)


def _tools(task: Task, unit: WorkUnit) -> ToolRequest:
    if unit.condition.mode is None:
        raise UsageError(f"condition {unit.condition.key} offers tools but names no mode")
    return ToolRequest(task.tool_functions(unit.item), parse_tool_mode(unit.condition.mode))


def request_fingerprint(request: GenerationRequest) -> str:
    """Equal for two requests that generate the same text (what is attended
    to is not part of it): such a turn is generated once and shared."""
    constraint = request.constraint
    shown: list[Any] = [dataclasses.asdict(request.prompt), dataclasses.asdict(request.settings),
                        None if constraint is None else [constraint.engine, constraint.output_format,
                                                         constraint.schema, constraint.thinking]]
    if request.tools is not None:  # left out without tools: fingerprints are what they were
        shown.append(dataclasses.asdict(request.tools))
    return json.dumps(shown, ensure_ascii=False, default=str)


def first_turn(plan: TaskPlan, unit: WorkUnit) -> GenerationRequest:
    """The request of the unit's first turn (a step or its first answer)."""
    turn = first_plan(plan, unit)
    if turn is None:
        raise AssertionError(f"arm {unit.condition.arm} takes no turn")
    return request_for(plan, unit, turn)


def answer_turns(plan: TaskPlan, unit: WorkUnit, free_text: str | None) -> tuple[TurnPlan | None, TurnPlan]:
    """The unit's first answer turn, after the step before it (None: its
    first turn is the answer; reason_then_constrain's free turn, which
    wrote ``free_text``), both as its arm's policy plans them."""
    ctx = UnitContext(plan, unit)
    step = unit.arm.decide(ctx, ())
    turn = step
    if step is not None and not step.answer:
        if free_text is None:
            raise AssertionError("a unit whose first turn is a step needs that step's text")
        turn = unit.arm.decide(ctx, (TurnOutcome(step, free_text, "stop", lambda: Verdict(valid=None)),))
    if turn is None:
        raise AssertionError(f"arm {unit.condition.arm} gives no answer")
    return (None if step is turn else step), turn


def final_request(plan: TaskPlan, unit: WorkUnit, free_text: str | None) -> GenerationRequest:
    """The request of the unit's first answer: its first turn, or after a
    step (reason_then_constrain's free turn) that wrote ``free_text``."""
    return request_for(plan, unit, answer_turns(plan, unit, free_text)[1])


def _attend(plan: TaskPlan, unit: WorkUnit) -> str | None:
    """The text ``--attention`` measures: the task's schema as prompted."""
    return plan.task.attention_text(unit.item, unit.condition) if plan.task.shows_schema else None
