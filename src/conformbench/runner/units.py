"""Work units: one (model, task, item, condition) generation each, in a
deterministic order that keeps the conditions of one item together (so a
backend's prompt cache is reused) and puts two-turn arms after the free-text
generation they reuse."""

from __future__ import annotations

from dataclasses import dataclass, replace

from conformbench.arms import arms
from conformbench.errors import UsageError
from conformbench.records.generation import Constraint, DecodingSettings, GenerationRequest, Turn, TurnBudgets
from conformbench.records.items import Condition, Item
from conformbench.records.prompt import Prompt
from conformbench.records.replay import sample_key
from conformbench.tasks.base import Task

__all__ = [
    "TaskPlan",
    "WorkUnit",
    "chunks",
    "final_request",
    "first_turn",
    "plan_task",
    "settings_for",
    "turn_of",
]


@dataclass(frozen=True)
class WorkUnit:
    task: str
    model: str
    item: Item
    condition: Condition
    #: for two-turn arms: the unconstrained condition whose text is reused
    #: (None: the free turn is generated for this unit itself)
    free_condition: Condition | None = None
    #: which of the run's samples of the item and condition (0: the first)
    sample: int = 0

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.task, self.model, self.item.id, sample_key(self.condition.key, self.sample))

    @property
    def two_turn(self) -> bool:
        return arms.get(self.condition.arm).two_turn

    @property
    def free_key(self) -> tuple[str, str, str, str] | None:
        if self.free_condition is None:
            return None
        return (self.task, self.model, self.item.id, sample_key(self.free_condition.key, self.sample))


@dataclass(frozen=True)
class TaskPlan:
    task: Task
    items: list[Item]
    conditions: list[Condition]
    #: decoding settings of every turn but max_tokens, which comes from budgets
    settings: DecodingSettings
    budgets: TurnBudgets
    #: two-turn condition key -> the unconstrained condition it reuses
    free_source: dict[str, Condition]
    #: generations per item and condition (``[decoding] samples``)
    samples: int = 1

    def units(self, model: str) -> list[WorkUnit]:
        """Item by item, each sample's conditions together (one sample:
        exactly the units of a run before samples existed)."""
        return [
            WorkUnit(
                self.task.name, model, item, cond, self.free_source.get(cond.key), sample
            )
            for item in self.items
            for sample in range(self.samples)
            for cond in self.conditions
        ]


def _free_source(cond: Condition, conditions: list[Condition]) -> Condition | None:
    """The unconstrained condition a two-turn condition reuses: same format
    cell and shots if there is one, else the same shots, else any."""
    free = [c for c in conditions if c.arm == "unconstrained"]
    for same in (
        lambda c: (c.schema_format, c.output_format, c.shots)
        == (cond.schema_format, cond.output_format, cond.shots),
        lambda c: c.shots == cond.shots,
        lambda c: True,
    ):
        found = [c for c in free if same(c)]
        if found:
            return found[0]
    return None


def _order(conditions: list[Condition]) -> tuple[list[Condition], dict[str, Condition]]:
    """The task's order, each two-turn condition moved right after the free
    generation it reuses (whose tokens are then still in the backend's
    prompt cache); two-turn conditions without one go last."""
    single = [c for c in conditions if not arms.get(c.arm).two_turn]
    ordered = list(single)
    free_source: dict[str, Condition] = {}
    for cond in conditions:
        if not arms.get(cond.arm).two_turn:
            continue
        source = _free_source(cond, single)
        if source is None:
            ordered.append(cond)
            continue
        free_source[cond.key] = source
        at = ordered.index(source) + 1
        while at < len(ordered) and free_source.get(ordered[at].key) == source:
            at += 1
        ordered.insert(at, cond)
    return ordered, free_source


def chunks(units: list[WorkUnit], size: int) -> list[list[WorkUnit]]:
    """Consecutive units in batches of at most ``size`` that do not depend on
    each other: a unit reusing another's text starts a new batch."""
    out: list[list[WorkUnit]] = []
    current: list[WorkUnit] = []
    keys: set[tuple[str, str, str, str]] = set()
    for unit in units:
        if current and (len(current) >= size or unit.free_key in keys):
            out.append(current)
            current, keys = [], set()
        current.append(unit)
        keys.add(unit.key)
    if current:
        out.append(current)
    return out


def plan_task(task: Task, settings: DecodingSettings, budgets: TurnBudgets | None = None,
              samples: int = 1) -> TaskPlan:
    conditions = task.conditions()
    keys = [c.key for c in conditions]
    dupes = sorted({k for k in keys if keys.count(k) > 1})
    if dupes:
        raise UsageError(f"task {task.name} lists condition(s) twice: {', '.join(dupes)}")
    ordered, free_source = _order(conditions)
    items = task.items()
    ids = [i.id for i in items]
    if len(set(ids)) != len(ids):
        raise UsageError(f"task {task.name} has duplicate item ids")
    return TaskPlan(task, items, ordered, settings, budgets or task.default_budgets, free_source, samples)


def _constraint(task: Task, item: Item, cond: Condition) -> Constraint | None:
    if not arms.get(cond.arm).constrained:
        return None
    schema = task.contract_schema(item, cond)
    if schema is None or cond.engine is None:
        raise UsageError(
            f"task {task.name}: condition {cond.key} applies a grammar but has "
            "no contract schema or no engine"
        )
    return Constraint(schema=schema, engine=cond.engine, output_format=task.contract_form(item, cond))


def turn_of(cond: Condition, packaging: bool = False) -> Turn:
    """Which budget a generation under ``cond`` spends: the packaging turn of
    a two-turn arm, the free turn of an arm without a contract, else the
    answer ("json") turn."""
    if packaging:
        return "packaging"
    return "free" if cond.contract is None and not arms.get(cond.arm).constrained else "json"


def settings_for(plan: TaskPlan, item: Item, cond: Condition, turn: Turn) -> DecodingSettings:
    """The run's decoding settings with the turn's budget, plus the task's
    stop strings for this generation (run-wide stops first, none repeated)."""
    settings = replace(plan.settings, max_tokens=plan.budgets.of(turn))
    extra = plan.task.stop_sequences(item, cond)
    if not extra:
        return settings
    return replace(settings, stop=tuple(dict.fromkeys([*settings.stop, *extra])))


def first_turn(plan: TaskPlan, unit: WorkUnit) -> GenerationRequest:
    """The free-text turn of a two-turn unit (no contract, no grammar)."""
    prompt = plan.task.prompt(unit.item, unit.condition)
    # the turn stands in for the unconstrained generation of the same cell,
    # so it stops where that one would
    free = replace(unit.condition, arm="unconstrained", contract=None, engine=None)
    settings = _seeded(settings_for(plan, unit.item, free, "free"), unit.sample)
    return GenerationRequest(prompt=prompt, settings=settings)


def _seeded(settings: DecodingSettings, sample: int) -> DecodingSettings:
    """Sample ``sample``'s settings: the run's seed + the sample index."""
    return settings if sample == 0 else replace(settings, seed=settings.seed + sample)


def final_request(
    plan: TaskPlan, unit: WorkUnit, free_text: str | None
) -> GenerationRequest:
    """The request whose text is recorded for the unit."""
    prompt: Prompt
    if unit.two_turn:
        if free_text is None:
            raise AssertionError("two-turn unit without its free text")
        prompt = plan.task.packaging_prompt(unit.item, unit.condition, free_text)
    else:
        prompt = plan.task.prompt(unit.item, unit.condition)
    constraint = _constraint(plan.task, unit.item, unit.condition)
    settings = _seeded(settings_for(plan, unit.item, unit.condition, turn_of(unit.condition, unit.two_turn)),
                       unit.sample)
    return GenerationRequest(prompt=prompt, settings=settings, constraint=constraint,
                             attend=_attend(plan, unit) if settings.attention else None)


def _attend(plan: TaskPlan, unit: WorkUnit) -> str | None:
    """The text ``--attention`` measures: the task's schema as prompted."""
    text_of = getattr(plan.task, "attention_text", None)
    return str(text_of(unit.item, unit.condition)) if callable(text_of) else None
