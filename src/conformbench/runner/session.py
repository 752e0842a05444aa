"""The run's session (the replay being written, each unit's turns, the
table of generated turns) and the batches that take the units' turns: each
batch's new requests generated together, an identical request once, every
answer written as soon as it is in. (A batch is no *step*: a step is the
free turn before an answer, whose cost ``StepCost`` records; docs/glossary.md.)"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from conformbench.backends.base import Backend, StreamsResults
from conformbench.engines.thinking_grammar import split_thinking
from conformbench.errors import BackendError, UnsupportedSchemaError
from conformbench.records.generation import GenerationRequest, GenerationResult
from conformbench.records.prompt import Prompt
from conformbench.records.replay import GenerationRecord, StepCost
from conformbench.records.replay_file import ReplayWriter
from conformbench.records.spec import RunSpec
from conformbench.runner.ledger.shards import Shard
from conformbench.runner.mask_place import placed_toll
from conformbench.runner.progress import RunProgress
from conformbench.runner.turns import (
    GeneratedTurn,
    TurnKey,
    TurnTable,
    UnitState,
    answer_key,
    outcome_of,
    rebuild,
    step_cost,
    turn_key,
)
from conformbench.runner.units import TaskPlan, UnitContext, WorkUnit, request_for

__all__ = ["RunSummary", "Session", "generate", "record_of", "run_chunk", "split_answer"]

Key = tuple[str, str, str, str]
Outcome = GenerationResult | UnsupportedSchemaError


@dataclass
class RunSummary:
    out: Path
    replay: Path
    total: int = 0
    #: generations already in the replay (resumed run)
    skipped: int = 0
    generated: int = 0
    excluded: int = 0
    #: bytes of an unterminated last line cut off before resuming
    truncated_tail: int = 0
    #: tasks whose n this run raised over the replay's: {task: (old n, new n)}
    grown: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: what a larger spec changed (n, budgets) and how many answers it redoes
    growth_notes: list[str] = field(default_factory=list)
    redone: int = 0
    seconds: float = 0.0
    #: generations folded in from finished parts (``--shard``)
    folded: int = 0
    canary: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: generations of this run that failed (finish reason "error"), and the first one's error
    failed: int = 0
    first_error: str | None = None

    def failure_line(self) -> tuple[str | None, bool]:
        """(what failed, for the terminal, or None; whether no generation
        of this run succeeded at all)."""
        attempted = self.generated - self.excluded
        if not self.failed:
            return None, False
        first = (self.first_error or "no detail")[:300]
        none_succeeded = self.failed >= attempted
        share = f"every one of the {attempted}" if none_succeeded else f"{self.failed} of {attempted}"
        return (f"{share} generations of this run failed (first: {first}); they are kept as error "
                f"records in {self.replay} and a rerun retries them"), none_succeeded


@dataclass
class Session:
    spec: RunSpec
    writer: ReplayWriter
    summary: RunSummary
    #: recorded answers (errors and redone ones left out) by unit key, then round
    recorded: dict[Key, dict[int, GenerationRecord]] = field(default_factory=dict)
    #: each unit's turns so far and next turn, rebuilt from ``recorded`` on first use
    states: dict[Key, UnitState] = field(default_factory=dict)
    #: every turn generated or recorded, by request, for other arms to share
    table: TurnTable = field(default_factory=TurnTable)
    items_written: set[tuple[str, str]] = field(default_factory=set)
    started: float = field(default_factory=time.monotonic)
    progress: RunProgress | None = None
    #: the part of the items this process generates (None: all)
    shard: Shard | None = None

    def owns(self, unit: WorkUnit) -> bool:
        return self.shard is None or self.shard.owns(unit.task, unit.item.id)

    def state(self, plan: TaskPlan, unit: WorkUnit) -> UnitState:
        found = self.states.get(unit.key)
        if found is None:
            found = rebuild(plan, unit, self.recorded.get(unit.key, {}), self.table)
            self.states[unit.key] = found
        return found

    def finished(self, plan: TaskPlan, unit: WorkUnit) -> bool:
        return self.state(plan, unit).next is None


def generate(backend: Backend, requests: list[GenerationRequest]) -> Iterator[Outcome]:
    """Outcomes in request order: one by one from a streaming backend (each
    written before the rest are in), else from one ``generate_many`` call."""
    if not requests:
        return
    if isinstance(backend, StreamsResults):
        count = 0
        with closing(backend.generate_stream(requests)) as stream:
            for count, result in enumerate(stream, start=1):  # noqa: B007 (counted for the check)
                yield result
        _check_count(count, requests)
        return
    try:
        results: list[Outcome] = list(backend.generate_many(requests))
    except UnsupportedSchemaError:
        # find which requests the engine cannot compile, one at a time
        results = []
        for request in requests:
            try:
                results.append(backend.generate(request))
            except UnsupportedSchemaError as exc:
                results.append(exc)
    _check_count(len(results), requests)
    yield from results


def split_answer(request: GenerationRequest, outcome: Outcome) -> Outcome:
    """Under a thinking constraint (think_then_constrain): the text before
    the stop string as ``thinking``, the answer after it as ``text`` (empty
    when the generation ended before the stop string)."""
    thinking = request.constraint.thinking if request.constraint is not None else None
    if thinking is None or not isinstance(outcome, GenerationResult):
        return outcome
    thought, answer = split_thinking(outcome.text, thinking.stop)
    return replace(outcome, thinking=thought, text=answer or "")


def _check_count(count: int, requests: list[GenerationRequest]) -> None:
    if count != len(requests):
        raise BackendError(f"backend returned {count} results for {len(requests)} requests")


def record_of(unit: WorkUnit, request: GenerationRequest, outcome: Outcome,
            free_text: str | None, round_: int = 0, shared: str | None = None,
            step: StepCost | None = None) -> GenerationRecord:
    """The answer's record; ``step``: what the free step in ``free_text`` cost."""
    record = GenerationRecord(
        task=unit.task, model=unit.model, item_id=unit.item.id,
        condition=unit.condition, prompt=request.prompt, free_text=free_text,
        step=step if free_text is not None else None,
        **_sample_fields(unit, request.settings.seed, round_), round=round_, shared=shared,
        temperature=None if round_ == 0 else request.settings.temperature,
        grammar=False if unit.condition.engine is not None and request.constraint is None else None,
    )
    if isinstance(outcome, UnsupportedSchemaError):
        return record.model_copy(update={"finish_reason": "excluded", "excluded": str(outcome)})
    return record.model_copy(update={
        "text": outcome.text, "finish_reason": outcome.finish_reason,
        "prompt_tokens": outcome.prompt_tokens, "completion_tokens": outcome.completion_tokens,
        "seconds": outcome.seconds, "compile_seconds": outcome.compile_seconds,
        "engine_input": outcome.engine_input, "error": outcome.error,
        "unenforced": list(outcome.unenforced),
        "beams": outcome.beams if outcome.beams > 1 else None, "attention": outcome.attention,
        "thinking": outcome.thinking, "think_cut": outcome.think_cut,
        "server": outcome.server,
        "mask_toll": placed_toll(request, outcome),
    })


def _sample_fields(unit: WorkUnit, seed: int, round_: int = 0) -> dict[str, Any]:
    """A later sample's index and seed, a later round's seed (none for
    sample 0's first answer: its record is what it was before samples and
    rounds existed, its seed the header's)."""
    fields: dict[str, Any] = {} if unit.sample == 0 else {"sample": unit.sample}
    if unit.sample or round_:
        fields["seed"] = seed
    return fields


def _write_record(session: Session, unit: WorkUnit, record: GenerationRecord) -> None:
    session.writer.write(record)
    session.summary.generated += 1
    session.summary.excluded += record.finish_reason == "excluded"
    if record.finish_reason == "error":
        session.summary.failed += 1
        session.summary.first_error = session.summary.first_error or record.error


def _finished(session: Session) -> None:
    """A unit took its last turn (for this run)."""
    if session.progress is not None:
        session.progress.advance(1, time.monotonic() - session.started)


def _skip_cells(session: Session, plan: TaskPlan, chunk: list[WorkUnit]) -> list[WorkUnit]:
    """Record the units the task has no prompt for (e.g. a schema without a
    rendering in the cell's schema format) as excluded, with the task's
    reason, and return the others. Nothing is sent to the backend for them."""
    left: list[WorkUnit] = []
    for unit in chunk:
        reason = plan.task.cell_exclusion(unit.item, unit.condition)
        if reason is None:
            left.append(unit)
            continue
        session.state(plan, unit).next = None
        _write_record(session, unit, GenerationRecord(
            task=unit.task, model=unit.model, item_id=unit.item.id, condition=unit.condition,
            prompt=Prompt(messages=()), finish_reason="excluded", excluded=reason,
            **_sample_fields(unit, plan.settings.seed + unit.sample),
        ))
        _finished(session)
    return left


def _take(session: Session, plan: TaskPlan, state: UnitState, request: GenerationRequest, made: GeneratedTurn) -> None:
    """The unit takes a generated turn: an answer is recorded as its next
    round (excluded or failed: the unit stops for this run; a rerun retries
    a failure), then its policy picks the next turn."""
    turn, unit = state.next, state.unit
    assert turn is not None
    result = made.result
    # an answer taken from another unit's step is its own, as the answer a fresh run makes first
    shared = None if made.owner == unit.key or made.step else made.source
    if turn.answer:
        _write_record(session, unit, record_of(unit, request, result, state.step_text, state.rounds, shared,
                                               state.last_step))
        state.rounds += 1
        if isinstance(result, UnsupportedSchemaError) or result.finish_reason == "error":
            state.next = None
            _finished(session)
            return
    else:
        state.last_step = step_cost(made)
    text = result.text if isinstance(result, GenerationResult) else ""
    finish = result.finish_reason if isinstance(result, GenerationResult) else "error"
    state.turns.append(outcome_of(plan, unit, turn, text, finish))
    state.next = unit.arm.decide(UnitContext(plan, unit), tuple(state.turns))
    if state.next is None:
        _finished(session)


def run_chunk(session: Session, backend: Backend, plan: TaskPlan,
              chunk: list[WorkUnit]) -> None:
    """Take the units' turns in batches, each batch's new requests generated
    together; a request already generated (another arm's identical turn,
    in this batch or before) is taken from the table, not generated again."""
    chunk = _skip_cells(session, plan, chunk)
    states = [session.state(plan, u) for u in chunk]
    while active := [s for s in states if s.next is not None]:
        requests = {s.unit.key: request_for(plan, s.unit, s.next) for s in active if s.next is not None}
        prints = {s.unit.key: turn_key(s.unit, requests[s.unit.key]) for s in active}
        waiting: dict[TurnKey, list[UnitState]] = {}
        for state in active:
            waiting.setdefault(prints[state.unit.key], []).append(state)
        new = [fp for fp in waiting if not _made(session.table.get(fp), waiting[fp], requests)]
        for fp in [fp for fp in waiting if fp not in new]:
            _take_all(session, plan, waiting[fp], requests, fp)
        # an answer owns what it shares with a step (as in a fresh run, where answers come first)
        owners = [next((s for s in waiting[fp] if s.next and s.next.answer), waiting[fp][0]) for fp in new]
        asked = [requests[o.unit.key] for o in owners]
        outcomes = map(split_answer, asked, generate(backend, asked))
        for fp, owner, outcome in zip(new, owners, outcomes, strict=True):
            answer = owner.next is not None and owner.next.answer
            key = answer_key(owner.unit, owner.rounds) if answer else owner.unit.key[3]
            session.table.put(fp, GeneratedTurn(outcome, key, owner.unit.key, step=not answer))
            _take_all(session, plan, waiting[fp], requests, fp)


def _made(made: GeneratedTurn | None, states: list[UnitState], requests: dict[Key, GenerationRequest]) -> bool:
    """Whether every unit in ``states`` may take the turn already ``made``."""
    return made is not None and all(made.answers(requests[s.unit.key]) for s in states
                                    if s.next is not None and s.next.answer)


def _take_all(session: Session, plan: TaskPlan, states: list[UnitState],
              requests: dict[Key, GenerationRequest], fingerprint: TurnKey) -> None:
    made = session.table.get(fingerprint)
    assert made is not None
    for state in states:
        _take(session, plan, state, requests[state.unit.key], made)
