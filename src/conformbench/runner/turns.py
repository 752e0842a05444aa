"""A unit's turns: what its arm's policy has taken so far (rebuilt from the
replay on resume, so a run killed between rounds goes on at the next one)
and the turn it asks for next; and the table of generated turns by request,
so a turn identical to another arm's is generated once and shared."""

from __future__ import annotations

from dataclasses import dataclass, field

from conformbench.errors import UnsupportedSchemaError
from conformbench.records.generation import GenerationRequest, GenerationResult
from conformbench.records.replay import GenerationRecord, StepCost, sample_key
from conformbench.records.rounds import TurnOutcome, TurnPlan, Verdict
from conformbench.runner.units import TaskPlan, UnitContext, WorkUnit, request_fingerprint, request_for

__all__ = ["GeneratedTurn", "TurnKey", "TurnTable", "UnitState", "answer_key", "outcome_of", "rebuild", "step_cost",
           "turn_key"]

Key = tuple[str, str, str, str]


@dataclass(frozen=True)
class GeneratedTurn:
    """A generated turn: its outcome and where it is recorded (the last
    part of the key of the answer that holds it, or its unit's for a step)."""

    result: GenerationResult | UnsupportedSchemaError
    source: str
    #: the unit that generated it (the others that take it share it)
    owner: Key
    #: False for a step read back from a replay made before steps' costs
    #: were recorded: its result's tokens and seconds are unknown, not 0
    cost_known: bool = True
    #: a step (not an answer of its owner's arm): an answer taking it is
    #: recorded as its own generation, as the answer a fresh run generates
    #: first and the step takes (a grown run's new unconstrained answer and
    #: the recorded reason_then_constrain's free step)
    step: bool = False

    def answers(self, request: GenerationRequest) -> bool:
        """Whether an answer whose request is ``request`` may take it: not a
        step whose cost is unknown (its record would say 0 tokens), nor one
        asked to measure attention (a step measures none)."""
        return not self.step or (self.cost_known and request.attend is None)


def step_cost(made: GeneratedTurn) -> StepCost | None:
    """What a step taken from ``made`` cost (None: unknown, or no result)."""
    result = made.result
    if not made.cost_known or not isinstance(result, GenerationResult):
        return None
    return StepCost(prompt_tokens=result.prompt_tokens, completion_tokens=result.completion_tokens,
                    seconds=result.seconds, finish_reason=result.finish_reason)


#: a generated turn's key: the model and the request's fingerprint
TurnKey = tuple[str, str]


def turn_key(unit: WorkUnit, request: GenerationRequest) -> TurnKey:
    """Two units' turns are one generation when the model and the request
    (``units.request_fingerprint``) are the same."""
    return (unit.model, request_fingerprint(request))


@dataclass
class TurnTable:
    """Generated turns by ``turn_key``."""

    made: dict[TurnKey, GeneratedTurn] = field(default_factory=dict)

    def get(self, key: TurnKey) -> GeneratedTurn | None:
        return self.made.get(key)

    def put(self, key: TurnKey, made: GeneratedTurn) -> None:
        """Keep the first turn made for ``key``, unless it was a step and
        ``made`` an answer (generated since: an answer ``GeneratedTurn.answers``
        could not take the step)."""
        found = self.made.get(key)
        if found is None or (found.step and not made.step):
            self.made[key] = made


@dataclass
class UnitState:
    unit: WorkUnit
    turns: list[TurnOutcome] = field(default_factory=list)
    #: answers recorded so far (the next one's round number)
    rounds: int = 0
    #: the turn the policy asks for next (None: finished, or stopped for this run)
    next: TurnPlan | None = None
    #: what the last step taken cost (the next answer records it; None: unknown)
    last_step: StepCost | None = None

    @property
    def step_text(self) -> str | None:
        """The text of a step just taken (the next answer carries it)."""
        if self.turns and not self.turns[-1].plan.answer:
            return self.turns[-1].text
        return None


def outcome_of(plan: TaskPlan, unit: WorkUnit, turn: TurnPlan, text: str, finish_reason: str) -> TurnOutcome:
    """A turn taken, its verdict read from the text on first use (a step is
    no answer of the arm: its verdict says nothing, as free text's)."""
    truncated = finish_reason in ("length", "loop")

    def judge() -> Verdict:
        if not turn.answer:
            return Verdict(valid=None)
        return plan.task.verdict(unit.item, unit.condition, text, truncated)

    return TurnOutcome(turn, text, finish_reason, judge)


def _recorded(record: GenerationRecord) -> GenerationResult:
    return GenerationResult(
        text=record.answer, finish_reason=record.finish_reason if record.finish_reason != "excluded" else "error",
        prompt_tokens=record.prompt_tokens, completion_tokens=record.completion_tokens,
        seconds=record.seconds, compile_seconds=record.compile_seconds, engine_input=record.engine_input,
        error=record.error, unenforced=tuple(record.unenforced), attention=record.attention,
        thinking=record.thought, think_cut=record.think_cut, mask_toll=record.mask_toll)


def _recorded_step(record: GenerationRecord, owner: Key) -> GeneratedTurn:
    """The step an answer packaged, as its record holds it (with its cost
    when the replay recorded it, else marked unknown)."""
    text, step = record.free_text or "", record.step
    if step is None:
        return GeneratedTurn(GenerationResult(text=text, finish_reason="stop"), record.key[3], owner, cost_known=False,
                    step=True)
    result = GenerationResult(text=text, finish_reason=step.finish_reason, prompt_tokens=step.prompt_tokens,
                              completion_tokens=step.completion_tokens, seconds=step.seconds)
    return GeneratedTurn(result, record.key[3], owner, step=True)


def rebuild(plan: TaskPlan, unit: WorkUnit, records: dict[int, GenerationRecord], table: TurnTable) -> UnitState:
    """Replay the policy over the unit's recorded answers (by round): the
    turns taken, the turn it asks for next, and every recorded turn put in
    ``table`` for other arms to share. An excluded answer ends the unit."""
    state = UnitState(unit)
    ctx = UnitContext(plan, unit)
    while True:
        turn = unit.arm.decide(ctx, tuple(state.turns))
        record = records.get(state.rounds)
        if turn is None or record is None:
            state.next = turn
            return state
        if record.finish_reason == "excluded":
            return state
        if turn.answer:
            text, finish = record.answer, record.finish_reason
            made = GeneratedTurn(_recorded(record), record.shared or record.key[3], unit.key)
            state.rounds += 1
        elif record.free_text is not None:
            made = _recorded_step(record, unit.key)
            text, finish = record.free_text, record.step.finish_reason if record.step is not None else "stop"
        else:  # a record without its step: take the step again
            state.next = turn
            return state
        table.put(turn_key(unit, request_for(plan, unit, turn)), made)
        state.turns.append(outcome_of(plan, unit, turn, text, finish))


def answer_key(unit: WorkUnit, round_: int) -> str:
    """The last part of the key of the unit's answer of round ``round_``."""
    return sample_key(unit.condition.key, unit.sample, round_)
