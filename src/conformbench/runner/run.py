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
from conformbench.engines.base import form_refusal
from conformbench.errors import (
    BackendError,
    CanaryFailedError,
    UnsupportedSchemaError,
    UsageError,
)
from conformbench.models.base import Backend, StreamsResults, backends
from conformbench.models.runinfo import hardware_info
from conformbench.records.generation import GenerationRequest, GenerationResult, constraint_label
from conformbench.records.prompt import Prompt
from conformbench.records.replay import GenerationRecord, ItemRecord, ModelRecord, ReplayHeader
from conformbench.records.replay_file import REPLAY_NAME, ReplayContents, ReplayWriter, read_replay
from conformbench.records.spec import SERVER_ENGINE, ModelSpec, RunSpec
from conformbench.runner.extend import grow_replay
from conformbench.runner.progress import RunProgress
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
    seconds: float = 0.0
    canary: dict[str, dict[str, Any]] = field(default_factory=dict)


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


def _new_header(spec: RunSpec) -> ReplayHeader:
    return ReplayHeader(
        run_id=uuid.uuid4().hex,
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        conformbench_version=__version__,
        spec=spec.replay_dict(),
        hardware=hardware_info(),
    )


def _move_aside(path: Path) -> Path:
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    backup = path.with_name(f"{path.stem}.{stamp}.jsonl.bak")
    path.rename(backup)
    return backup


def _existing(path: Path, spec: RunSpec, plans: list[TaskPlan], summary: RunSummary,
              force: bool) -> ReplayContents | None:
    """The replay to resume (grown to a larger n where that is all that
    changed), or None to start afresh (moving a different run's replay aside
    only with --force)."""
    if not path.exists():
        return None
    hint = "use a new --out directory, or --force to move the old replay aside"
    try:
        contents = read_replay(path)
    except UsageError as exc:
        if not force:
            raise UsageError(f"{exc}; {hint}") from None
        contents = None
    wanted = spec.replay_dict()
    if contents is not None and contents.header.spec == wanted:
        return contents
    if contents is not None and (grown := grow_replay(contents, wanted, plans)):
        summary.grown = grown
        return contents
    if contents is not None and not contents.generations:
        path.unlink()  # a run that generated nothing (e.g. a model that failed to load)
        return None
    if not force:
        raise UsageError(f"{path} holds a run of a different spec; {_scoring_only(contents, wanted) or hint}")
    _move_aside(path)
    return None


def _scoring_only(contents: ReplayContents | None, wanted: dict[str, Any]) -> str | None:
    """The advice when the specs differ only in format_assertion, which
    changes how the recorded generations are scored, not the generations."""
    if contents is None:
        return None
    old = dict(contents.header.spec)
    new = dict(wanted)
    if old.pop("format_assertion", False) == new.pop("format_assertion", False) or old != new:
        return None
    flag = "--format-assertion" if wanted.get("format_assertion") else "--no-format-assertion"
    return (f"they differ only in format_assertion, which changes the scoring, not the generations: "
            f"rescore the replay with 'conformbench score {flag}'")


def _make_out(out: Path) -> None:
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a path below a file, no permission, read-only disk
        raise UsageError(f"cannot create output folder {out}: {exc.strerror or exc}") from None


def _open(spec: RunSpec, plans: list[TaskPlan], force: bool) -> _Session:
    _make_out(spec.out)
    path = spec.out / REPLAY_NAME
    summary = RunSummary(out=spec.out, replay=path)
    contents = _existing(path, spec, plans, summary, force)
    if contents is None:
        return _Session(spec, ReplayWriter.create(path, _new_header(spec)), summary)
    summary.truncated_tail = contents.truncated_tail
    session = _Session(spec, ReplayWriter.resume(path, contents.good_size), summary)
    for gen in contents.generations:
        if gen.finish_reason == "error":
            continue  # failed (a dead server...): tried again, the new record supersedes it
        session.done.add(gen.key)
        session.free_texts[gen.key] = gen.text
    session.items_written = {(rec.task, rec.item.id) for rec in contents.items}
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
    from conformbench.checks.canary import check_canary, detect_dialect

    if not session.spec.canary:
        skipped: dict[str, Any] = {constraint_label(*pair): {"skipped": "canary turned off explicitly"}
                                   for pair in forms}
        if SERVER_ENGINE in skipped:  # the server's dialect is still needed: the canary's request finds it
            skipped[SERVER_ENGINE]["dialect"] = detect_dialect(backend, session.spec.decoding.seed)
        return skipped

    results: dict[str, Any] = {}
    for engine, form in forms:
        try:
            result = check_canary(backend, engine, session.spec.decoding.seed, form)
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
    )
    if isinstance(outcome, UnsupportedSchemaError):
        return record.model_copy(update={"finish_reason": "excluded", "excluded": str(outcome)})
    return record.model_copy(update={
        "text": outcome.text, "finish_reason": outcome.finish_reason,
        "prompt_tokens": outcome.prompt_tokens, "completion_tokens": outcome.completion_tokens,
        "seconds": outcome.seconds, "compile_seconds": outcome.compile_seconds,
        "engine_input": outcome.engine_input, "error": outcome.error,
        "unenforced": list(outcome.unenforced),
    })


def _write(session: _Session, unit: WorkUnit, request: GenerationRequest,
           outcome: Outcome, free_text: str | None) -> None:
    _write_record(session, unit, _record(unit, request, outcome, free_text))


def _write_record(session: _Session, unit: WorkUnit, record: GenerationRecord) -> None:
    session.writer.write(record)
    session.done.add(unit.key)
    session.free_texts[unit.key] = record.text
    session.summary.generated += 1
    session.summary.excluded += record.finish_reason == "excluded"
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
    todo = [u for p in plans for u in p.units(model.label) if u.key not in session.done]
    if not todo:
        return
    progress.describe(f"{model.label}: loading")
    factory: Any = backends.get(model.backend)
    backend: Backend = factory(model.backend_config())
    try:
        canary = _canaries(session, model, backend, _constrained_forms(plans, todo))
        dialect = canary.get(SERVER_ENGINE, {}).get("dialect")
        if dialect:
            progress.log(f"{model.label}: structured-output dialect {dialect}")
        session.writer.write(ModelRecord(label=model.label, backend=model.backend,
                                         metadata=backend.metadata(), canary=canary))
        for plan in plans:
            _write_items(session, plan)
            units = [u for u in todo if u.task == plan.task.name]
            progress.describe(f"{model.label} {plan.task.name}")
            batch = model.concurrency * (_STREAM_BATCH if isinstance(backend, StreamsResults) else 1)
            for chunk in chunks(units, batch):
                _run_chunk(session, backend, plan, chunk)
    finally:
        backend.close()


def build_plans(spec: RunSpec) -> list[TaskPlan]:
    plans = []
    for task_spec in spec.tasks:
        task = tasks.get(task_spec.name)(spec.task_options(task_spec))
        budgets = task_spec.budgets(spec.decoding, task.default_budgets)
        # max_tokens here is a placeholder: each turn takes its own budget
        plans.append(plan_task(task, spec.decoding.settings(budgets.json), budgets))
    return plans


def execute(spec: RunSpec, force: bool = False) -> RunSummary:
    """Run (or resume) every generation of the spec into OUT/replay.jsonl."""
    plans = build_plans(spec)
    session = _open(spec, plans, force)
    summary = session.summary
    with session.writer:
        summary.total = sum(len(p.items) * len(p.conditions) for p in plans) * len(spec.models)
        summary.skipped = len(session.done)
        with RunProgress(summary.total, summary.skipped, spec.quiet) as progress:
            session.progress = progress
            for name, (old, new) in sorted(summary.grown.items()):
                progress.log(f"growing task {name!r} from n={old} to n={new}: "
                             "the generations already in the replay are reused")
            if summary.truncated_tail:
                progress.log(f"cut off an unterminated last line ({summary.truncated_tail} "
                             f"bytes) of {summary.replay}; its generation is redone")
            for model in spec.models:
                _run_model(session, model, plans, progress)
    summary.seconds = time.monotonic() - session.started
    return summary
