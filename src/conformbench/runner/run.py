"""Running a spec: every (model, task, item, condition) generation appended to
OUT/replay.jsonl, resumable, with the constraint canary run first."""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from conformbench._version import __version__
from conformbench.arms import arms
from conformbench.backends.base import Backend, DecodesTogether, StreamsResults, backends
from conformbench.backends.runinfo import build_facts, hardware_info
from conformbench.engines.base import form_refusal
from conformbench.errors import (
    BackendError,
    CanaryFailedError,
    UnsupportedSchemaError,
    UsageError,
)
from conformbench.records.generation import GenerationRequest, GenerationResult, constraint_label
from conformbench.records.prompt import Prompt
from conformbench.records.replay import GenerationRecord, ItemRecord, ModelRecord, ReplayHeader
from conformbench.records.replay_file import REPLAY_NAME, ReplayWriter
from conformbench.records.spec import SERVER_ENGINE, ModelSpec, RunSpec
from conformbench.runner.progress import RunProgress
from conformbench.runner.resume import existing_replay
from conformbench.runner.shards import Shard, fold_shards, locked, main_generations
from conformbench.runner.units import (
    TaskPlan,
    WorkUnit,
    chunks,
    final_request,
    first_turn,
    plan_task,
)
from conformbench.tasks.base import tasks

__all__ = ["RunSummary", "execute"]

Key = tuple[str, str, str, str]
Outcome = GenerationResult | UnsupportedSchemaError

#: batch size of a streaming backend, in units of its concurrency: large, so
#: that its requests in flight rarely drain between batches
_STREAM_BATCH = 32


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
class _Session:
    spec: RunSpec
    writer: ReplayWriter
    summary: RunSummary
    done: set[Key] = field(default_factory=set)
    free_texts: dict[Key, str] = field(default_factory=dict)
    items_written: set[tuple[str, str]] = field(default_factory=set)
    started: float = field(default_factory=time.monotonic)
    progress: RunProgress | None = None
    #: the part of the items this process generates (None: all)
    shard: Shard | None = None

    def owns(self, unit: WorkUnit) -> bool:
        return self.shard is None or self.shard.owns(unit.task, unit.item.id)


def _new_header(spec: RunSpec) -> ReplayHeader:
    return ReplayHeader(
        run_id=uuid.uuid4().hex,
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        conformbench_version=__version__,
        spec=spec.replay_dict(),
        hardware=hardware_info(),
        build=build_facts(spec.models),
    )


def _make_out(out: Path) -> None:
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a path below a file, no permission, read-only disk
        raise UsageError(f"cannot create output folder {out}: {exc.strerror or exc}") from None


def _open(spec: RunSpec, plans: list[TaskPlan], force: bool, shard: Shard | None = None) -> _Session:
    """The session appending to OUT/replay.jsonl (after folding in any
    finished parts), or for a part to its own file, skipping what the main
    replay already holds."""
    path = spec.out / REPLAY_NAME if shard is None else shard.path(spec.out)
    summary = RunSummary(out=spec.out, replay=path)
    folded = None
    if shard is None:
        summary.folded, folded = fold_shards(spec.out, _new_header(spec))
    elsewhere = [] if shard is None else main_generations(spec.out / REPLAY_NAME, spec.replay_dict())
    contents, growth = existing_replay(path, spec, plans, force, folded)
    summary.grown, summary.growth_notes, summary.redone = growth.n, growth.notes(), len(growth.redo)
    if contents is None:
        session = _Session(spec, ReplayWriter.create(path, _new_header(spec)), summary, shard=shard)
    else:
        summary.truncated_tail = contents.truncated_tail
        session = _Session(spec, ReplayWriter.resume(path, contents.good_size), summary, shard=shard)
        session.items_written = {(rec.task, rec.item.id) for rec in contents.items}
    for gen in [*elsewhere, *(contents.generations if contents else [])]:
        if gen.finish_reason == "error" or gen.key in growth.redo:
            continue  # failed (a dead server...) or cut by a smaller budget: the new record supersedes it
        session.done.add(gen.key)
        session.free_texts[gen.key] = gen.text
    return session


def _jsonable(value: Any) -> dict[str, Any]:
    as_record = getattr(value, "as_record", None)
    if callable(as_record):
        return dict(as_record())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dict(dump(mode="json"))
    return {"result": repr(value)}


def _constrained_forms(plans: list[TaskPlan], todo: list[WorkUnit]) -> list[tuple[str, str]]:
    """(engine, answer form) of every constraint the units will apply, in
    label order; a form the engine cannot constrain is not applied (its
    units are recorded as excluded), so it has no canary."""
    task_of = {p.task.name: p.task for p in plans}
    pairs = {
        (u.condition.engine, task_of[u.task].contract_form(u.item, u.condition)) for u in todo
        if u.condition.engine is not None and arms.get(u.condition.arm).constrained
    }
    kept = [(e, f) for e, f in pairs if form_refusal(e, f) is None]
    return sorted(kept, key=lambda pair: constraint_label(*pair))


def _canaries(session: _Session, model: ModelSpec, backend: Backend,
              forms: list[tuple[str, str]]) -> dict[str, Any]:
    """Each constraint's canary verdict, keyed by ``constraint_label``."""
    from conformbench.audits.canary import check_canary, detect_dialect

    if not session.spec.canary:
        skipped: dict[str, Any] = {constraint_label(*pair): {"skipped": "canary turned off explicitly"}
                                   for pair in forms}
        if SERVER_ENGINE in skipped:  # the server's dialect is still needed: the canary's request finds it
            skipped[SERVER_ENGINE]["dialect"] = detect_dialect(backend, session.spec.decoding.seed)
        return skipped

    results: dict[str, Any] = {}
    for engine, form in forms:
        try:
            result = check_canary(backend, engine, session.spec.decoding.seed, form,
                                  beams=session.spec.decoding.beams)
        except CanaryFailedError as exc:
            raise CanaryFailedError(f"{exc} [model {model.label!r}]; the run stops") from None
        results[result.label] = _jsonable(result)
    session.summary.canary[model.label] = results
    return results


def _generate(backend: Backend, requests: list[GenerationRequest]) -> Iterator[Outcome]:
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


def _check_count(count: int, requests: list[GenerationRequest]) -> None:
    if count != len(requests):
        raise BackendError(f"backend returned {count} results for {len(requests)} requests")


def _record(unit: WorkUnit, request: GenerationRequest, outcome: Outcome,
            free_text: str | None) -> GenerationRecord:
    record = GenerationRecord(
        task=unit.task, model=unit.model, item_id=unit.item.id,
        condition=unit.condition, prompt=request.prompt, free_text=free_text,
        **_sample_fields(unit, request.settings.seed),
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
    })


def _sample_fields(unit: WorkUnit, seed: int) -> dict[str, Any]:
    """A later sample's index and seed (none for sample 0: its record is
    what it was before samples existed, its seed the header's)."""
    return {} if unit.sample == 0 else {"sample": unit.sample, "seed": seed}


def _write(session: _Session, unit: WorkUnit, request: GenerationRequest,
           outcome: Outcome, free_text: str | None) -> None:
    _write_record(session, unit, _record(unit, request, outcome, free_text))


def _write_record(session: _Session, unit: WorkUnit, record: GenerationRecord) -> None:
    session.writer.write(record)
    session.done.add(unit.key)
    session.free_texts[unit.key] = record.text
    session.summary.generated += 1
    session.summary.excluded += record.finish_reason == "excluded"
    if record.finish_reason == "error":
        session.summary.failed += 1
        session.summary.first_error = session.summary.first_error or record.error
    if session.progress is not None:
        session.progress.advance(1, time.monotonic() - session.started)


def _skip_cells(session: _Session, plan: TaskPlan, chunk: list[WorkUnit]) -> list[WorkUnit]:
    """Record the units the task has no prompt for (e.g. a schema without a
    rendering in the cell's schema format) as excluded, with the task's
    reason, and return the others. Nothing is sent to the backend for them."""
    left: list[WorkUnit] = []
    for unit in chunk:
        reason = plan.task.cell_exclusion(unit.item, unit.condition)
        if reason is None:
            left.append(unit)
            continue
        _write_record(session, unit, GenerationRecord(
            task=unit.task, model=unit.model, item_id=unit.item.id, condition=unit.condition,
            prompt=Prompt(messages=()), finish_reason="excluded", excluded=reason,
            **_sample_fields(unit, plan.settings.seed + unit.sample),
        ))
    return left


def _run_chunk(session: _Session, backend: Backend, plan: TaskPlan,
               chunk: list[WorkUnit]) -> None:
    """Generate a batch in order; two-turn units reuse their source's text
    (done in an earlier batch) or get their own free turn first."""
    chunk = _skip_cells(session, plan, chunk)
    own = [u for u in chunk if u.two_turn
           and (u.free_key is None or u.free_key not in session.free_texts)]
    outcomes = list(_generate(backend, [first_turn(plan, u) for u in own]))
    free = {u.key: o.text if isinstance(o, GenerationResult) else ""
            for u, o in zip(own, outcomes)}
    for unit in chunk:
        if unit.two_turn and unit.key not in free and unit.free_key is not None:
            free[unit.key] = session.free_texts[unit.free_key]
    requests = [final_request(plan, u, free.get(u.key)) for u in chunk]
    for unit, request, outcome in zip(chunk, requests, _generate(backend, requests), strict=True):
        _write(session, unit, request, outcome, free.get(unit.key))


def _write_items(session: _Session, plan: TaskPlan) -> None:
    for item in plan.items:
        if (plan.task.name, item.id) not in session.items_written:
            session.writer.write(ItemRecord(task=plan.task.name, item=item))
            session.items_written.add((plan.task.name, item.id))


def _run_model(session: _Session, model: ModelSpec, plans: list[TaskPlan],
               progress: RunProgress) -> None:
    todo = [u for p in plans for u in p.units(model.label)
            if u.key not in session.done and session.owns(u)]
    if not todo:
        return
    what = model.model or ("the embedded SmolLM2-135M" if model.backend == "llamacpp" else "its default model")
    progress.stage(f"{model.label}: loading {what} ({model.backend} backend)")
    factory: Any = backends.get(model.backend)
    backend: Backend = factory(model.backend_config())
    try:
        forms = _constrained_forms(plans, todo)
        if forms and session.spec.canary:
            progress.stage(f"{model.label}: constraint canary ({', '.join(sorted({e for e, _ in forms}))})")
        canary = _canaries(session, model, backend, forms)
        dialect = canary.get(SERVER_ENGINE, {}).get("dialect")
        if dialect:
            progress.log(f"{model.label}: structured-output dialect {dialect}")
        session.writer.write(ModelRecord(label=model.label, backend=model.backend,
                                         metadata=backend.metadata(), canary=canary))
        for plan in plans:
            _write_items(session, plan)
            units = [u for u in todo if u.task == plan.task.name]
            if units:
                progress.stage(f"{model.label} {plan.task.name}: generating {len(units)}")
            batch = max(backend.sequences_together if isinstance(backend, DecodesTogether) else 1,
                        model.concurrency * (_STREAM_BATCH if isinstance(backend, StreamsResults) else 1))
            for chunk in chunks(units, batch):
                _run_chunk(session, backend, plan, chunk)
        # the counters (requests, errors...) as they stand at the end
        session.writer.write(ModelRecord(label=model.label, backend=model.backend,
                                         metadata=backend.metadata(), canary=canary, final=True))
    finally:
        backend.close()


def build_plans(spec: RunSpec) -> list[TaskPlan]:
    plans = []
    for task_spec in spec.tasks:
        task = tasks.get(task_spec.name)(spec.task_options(task_spec))
        budgets = task_spec.budgets(spec.decoding, task.default_budgets)
        # max_tokens here is a placeholder: each turn takes its own budget
        plans.append(plan_task(task, spec.decoding.settings(budgets.json), budgets, spec.decoding.samples))
    return plans


def execute(spec: RunSpec, force: bool = False, shard: Shard | None = None) -> RunSummary:
    """Run (or resume) every generation of the spec into OUT/replay.jsonl
    or, for part ``shard`` of the items, into its own file (runner/shards.py)."""
    plans = build_plans(spec)
    _make_out(spec.out)
    path = spec.out / REPLAY_NAME if shard is None else shard.path(spec.out)
    with locked(path, "another run" if shard is None else f"another process running part {shard}"):
        session = _open(spec, plans, force, shard)
        _execute(session, plans)
    return session.summary


def _execute(session: _Session, plans: list[TaskPlan]) -> None:
    summary, spec = session.summary, session.spec
    with session.writer:
        owned = [u.key for m in spec.models for p in plans for u in p.units(m.label) if session.owns(u)]
        summary.total = len(owned)
        summary.skipped = sum(key in session.done for key in owned)
        with RunProgress(summary.total, summary.skipped, spec.quiet) as progress:
            session.progress = progress
            progress.stage(f"run: {summary.total} generations into {summary.replay}"
                           + (f", {summary.skipped} of them recorded already" if summary.skipped else ""))
            if summary.folded:
                progress.log(f"folded {summary.folded} generations from finished parts (--shard) "
                             f"into {summary.replay}")
            for note in summary.growth_notes:
                progress.log(f"growing the run: {note}; the generations already in the replay are reused")
            if summary.redone:
                progress.log(f"{summary.redone} recorded answers the smaller budget may have cut "
                             "are generated again")
            if summary.truncated_tail:
                progress.log(f"cut off an unterminated last line ({summary.truncated_tail} "
                             f"bytes) of {summary.replay}; its generation is redone")
            for model in spec.models:
                _run_model(session, model, plans, progress)
    summary.seconds = time.monotonic() - session.started
