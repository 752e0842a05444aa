"""Running a spec: every (model, task, item, condition) generation appended to
OUT/replay.jsonl, resumable, with the constraint canary run first."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conformbench.backends.base import (
    Backend,
    ChecksReplicas,
    DecodesTogether,
    ReachesServer,
    StreamsResults,
    backends,
)
from conformbench.backends.locate import loading_text
from conformbench.engines.base import form_refusal
from conformbench.errors import CanaryFailedError, UsageError
from conformbench.records.generation import DEFAULT_THINK_STOP, constraint_label
from conformbench.records.replay import ItemRecord, ModelRecord
from conformbench.records.spec import SERVER_ENGINE, ModelSpec, RunSpec
from conformbench.runner.ledger import ReproduceChoices, RunLedger, Shard, open_run, reproduction
from conformbench.runner.progress import RunProgress
from conformbench.runner.served_tools import run_tool_checks
from conformbench.runner.session import RunSummary, Session, run_chunk
from conformbench.runner.units import TaskPlan, WorkUnit, chunks, plan_task
from conformbench.tasks.base import tasks

__all__ = ["RunSummary", "execute", "reproduce"]

#: batch size of a streaming backend, in units of its concurrency: large, so
#: that its requests in flight rarely drain between batches
_STREAM_BATCH = 32


def _make_out(out: Path) -> None:
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a path below a file, no permission, read-only disk
        raise UsageError(f"cannot create output folder {out}: {exc.strerror or exc}") from None


def _session(spec: RunSpec, ledger: RunLedger, shard: Shard | None) -> Session:
    """The session appending to OUT/replay.jsonl (after folding in any
    finished parts), or for a part to its own file, skipping what the main
    replay already holds: what the run folder's ledger says."""
    summary = RunSummary(out=spec.out, replay=ledger.path, folded=ledger.folded, grown=ledger.growth.n,
                         growth_notes=ledger.growth.notes(), redone=len(ledger.growth.redo),
                         truncated_tail=ledger.contents.truncated_tail if ledger.contents else 0)
    return Session(spec, ledger.writer, summary, recorded=ledger.done, items_written=ledger.items, shard=shard)


def _constrained_forms(plans: list[TaskPlan], todo: list[WorkUnit]) -> list[tuple[str, str]]:
    """(engine, answer form) of every constraint the units will apply, in
    label order; a form the engine cannot constrain is not applied (its
    units are recorded as excluded), so it has no canary."""
    task_of = {p.task.name: p.task for p in plans}
    pairs = {
        (u.condition.engine, task_of[u.task].contract_form(u.item, u.condition)) for u in todo
        if u.condition.engine is not None
    }
    kept = [(e, f) for e, f in pairs if form_refusal(e, f) is None]
    return sorted(kept, key=lambda pair: constraint_label(*pair))


def _canaries(session: Session, model: ModelSpec, backend: Backend,
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
        results[result.label] = result.as_record()
    session.summary.canary[model.label] = results
    return results


def _write_items(session: Session, plan: TaskPlan) -> None:
    for item in plan.items:
        if (plan.task.name, item.id) not in session.items_written:
            session.writer.write(ItemRecord(task=plan.task.name, item=item))
            session.items_written.add((plan.task.name, item.id))


def _run_model(session: Session, model: ModelSpec, plans: list[TaskPlan],
               progress: RunProgress) -> None:
    todo = [u for p in plans for u in p.units(model.label)
            if session.owns(u) and not session.finished(p, u)]
    if not todo:
        return
    progress.stage(f"{model.label}: {loading_text(model.backend, model.model)}")
    factory: Any = backends.get(model.backend)
    backend: Backend = factory(model.backend_config())
    try:
        if isinstance(backend, ReachesServer):  # a dead URL is said as such, not as a failed canary
            backend.check_reachable()
        if isinstance(backend, ChecksReplicas) and len(model.base_urls) > 1:
            progress.stage(f"{model.label}: do the {len(model.base_urls)} servers serve one model?")
            backend.check_replicas(session.spec.decoding.seed)  # a pool of different weights: refused in one line
        forms = _constrained_forms(plans, todo)
        if forms and session.spec.canary:
            progress.stage(f"{model.label}: constraint canary ({', '.join(sorted({e for e, _ in forms}))})")
        canary = _canaries(session, model, backend, forms)
        canary |= run_tool_checks(model, backend, plans, todo, session.spec.decoding.seed, progress)
        dialect = canary.get(SERVER_ENGINE, {}).get("dialect")
        if dialect:
            progress.log(f"{model.label}: structured-output dialect {dialect}")
        session.writer.write(ModelRecord(label=model.label, backend=model.backend,
                                         metadata=backend.metadata(), canary=canary))
        for plan in plans:
            _write_items(session, plan)
            units = [u for u in todo if u.task == plan.task.name]
            if units:
                progress.stage(f"{model.label} {plan.task.name}")  # the count beside it is the run's
            batch = _batch(backend, model)
            for chunk in chunks(units, batch):
                run_chunk(session, backend, plan, chunk)
        # the counters (requests, errors...) as they stand at the end
        session.writer.write(ModelRecord(label=model.label, backend=model.backend,
                                         metadata=backend.metadata(), canary=canary, final=True))
    finally:
        backend.close()


def _batch(backend: Backend, model: ModelSpec) -> int:
    """Units taken together: a streaming backend's many requests in flight,
    the sequences a backend decodes at once, else one unit at a time, each
    to its last turn (its next turn then extends the prompt just evaluated,
    which the backend's prompt cache still holds)."""
    if isinstance(backend, StreamsResults):  # requests in flight on each server of a pool
        return model.concurrency * max(1, len(model.base_urls)) * _STREAM_BATCH
    return backend.sequences_together if isinstance(backend, DecodesTogether) else 1


def build_plans(spec: RunSpec) -> list[TaskPlan]:
    plans = []
    for task_spec in spec.tasks:
        task = tasks.get(task_spec.name)(spec.task_options(task_spec))
        budgets = task_spec.budgets(spec.decoding, task.default_budgets)
        # max_tokens here is a placeholder: each turn takes its own budget
        plans.append(plan_task(task, spec.decoding.settings(budgets.json), budgets, spec.decoding.samples,
                               spec.decoding.rounds, task_spec.think_stop or DEFAULT_THINK_STOP))
    return plans


def execute(spec: RunSpec, force: bool = False, shard: Shard | None = None) -> RunSummary:
    """Run (or resume) every generation of the spec into OUT/replay.jsonl
    or, for part ``shard`` of the items, into its own file (runner/ledger/shards.py)."""
    plans = build_plans(spec)
    _make_out(spec.out)
    with open_run(spec, plans, force, shard) as ledger:  # locked, and flushed and closed however the run ends
        session = _session(spec, ledger, shard)
        _execute(session, plans)
    return session.summary


def reproduce(replay: Path, out: Path | str, quiet: bool, choices: ReproduceChoices, n: int | None,
              before: Callable[[list[str]], None]) -> RunSummary:
    """Rerun ``replay``'s spec into ``out`` (``n``: the first n items of each
    task), with the server, key variable and local files of ``choices`` in
    place of the replay's: what the ledger says (``ledger.reproduction``).
    ``before`` is given the line of each replacement before the run starts."""
    spec, notes = reproduction(replay, out, quiet, choices, n)
    before(notes)
    return execute(spec)


def _execute(session: Session, plans: list[TaskPlan]) -> None:
    summary, spec = session.summary, session.spec
    owned = [(p, u) for m in spec.models for p in plans for u in p.units(m.label) if session.owns(u)]
    summary.total = len(owned)
    summary.skipped = sum(session.finished(p, u) for p, u in owned)
    with RunProgress(summary.total, summary.skipped, spec.quiet) as progress:
        session.progress = progress
        progress.stage(f"run: {summary.total} items×conditions (each item under each condition and sample; "
                       f"a multi-round arm's later rounds are extra answers) into {summary.replay}"
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
