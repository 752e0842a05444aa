"""The engine check: does each engine's grammar accept every valid document
and reject every invalid one, which schemas does it compile, and what does
it cost per schema and per token? No model is loaded: documents go through
the engine's own matcher as token ids of the model's tokenizer.

A valid document the grammar rejects is *over-constrained*, an invalid one
it accepts *under-constrained*; a schema the engine will not compile is
*refused* (coverage) and its documents are not judged.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, cast

from conformbench.audits.engine_check.prepare import Document, PreparedSchema, prepare
from conformbench.audits.engine_check.records import (
    CheckSettings,
    EngineCheckReport,
    EngineResult,
    Refusal,
    TokenizerInfo,
)
from conformbench.audits.engine_check.sources import CheckSource
from conformbench.audits.engine_check.store import OutcomeStore
from conformbench.audits.engine_check.summary import Judged, SchemaOutcome, summarise
from conformbench.audits.probe import ProbeReport
from conformbench.engines.base import Acceptor, Engine, Vocabulary, Walk, engines
from conformbench.errors import UnsupportedSchemaError, UsageError
from conformbench.jsontypes import Schema

__all__ = ["SLOW_ENGINES", "CheckConfig", "attach_probe", "check_steps", "left_out", "run_engine_check"]

Tick = Callable[[str, int], None]

#: engines the default check (no engine named) leaves out, and why: the
#: default answers in minutes; naming the engine adds it back
SLOW_ENGINES: dict[str, str] = {
    "outlines": "it builds an index over the whole vocabulary for every schema (seconds each; a build that "
                "runs long is stopped only at the compile limit), most of a check's time when it is in",
}
#: a compile this long is named in the progress line, with the engine
SLOW_COMPILE_S = 1.0


@dataclass(frozen=True)
class CheckConfig:
    engines: tuple[str, ...] = ()  # () = every registered engine
    serialisations: tuple[str, ...] = ("compact",)
    #: positions per schema where the full next-token mask is timed
    mask_positions: int = 4
    #: compile limit where the engine can stop a compile (outlines); None = the engine's own
    compile_timeout_s: float | None = 10.0
    #: run draft-specific sources on every engine, not only on those claiming the draft
    all_drafts: bool = False
    #: the first N schemas of each source (recorded in the report; the CLI applies it)
    limit: int | None = None


def _engine_names(config: CheckConfig) -> list[str]:
    for name in config.engines:
        engines.get(name)  # unknown names fail here, with a did-you-mean
    return list(config.engines) or [n for n in engines.names()
                                    if n not in left_out(config) and engines.get(n).model_free]


def left_out(config: CheckConfig) -> dict[str, str]:
    """The installed engines a check naming no engine leaves out, with why."""
    if config.engines:
        return {}
    return {name: why for name, why in SLOW_ENGINES.items()
            if name in engines.names() and engines.get(name)().availability() is None}


def _runs(engine: Engine, sources: list[CheckSource], config: CheckConfig) -> list[CheckSource]:
    return [s for s in sources if config.all_drafts or not s.draft or s.draft in engine.json_schema_drafts]


def check_steps(sources: list[CheckSource], config: CheckConfig) -> int:
    """Progress steps: one per schema per installed engine that runs it."""
    total = 0
    for name in _engine_names(config):
        engine = engines.get(name)()
        if engine.availability() is None:
            total += sum(len(s.schemas) for s in _runs(engine, sources, config))
    return total


def _piece(vocab: Vocabulary, token: int) -> str:
    piece = vocab.token_pieces[token] if 0 <= token < vocab.n_vocab else None
    return "<control>" if piece is None else piece.decode("utf-8", "replace")


def describe_walk(walk: Walk, tokens: tuple[int, ...], vocab: Vocabulary) -> str:
    if walk.accepted:
        return "accepted"
    if walk.consumed < len(tokens):
        return f"token {walk.consumed + 1} of {len(tokens)} refused: {_piece(vocab, tokens[walk.consumed])!r}"
    return "every token allowed, but the grammar cannot end there"


def _judge(acceptor: Acceptor, documents: tuple[Document, ...], vocab: Vocabulary) -> Judged:
    """A valid document must be accepted in every serialisation, an invalid
    one rejected in every serialisation."""
    for document in documents:
        walk = acceptor.walk(document.tokens)
        if walk.accepted != document.instance.valid:
            verdict: Literal["over", "under"] = "over" if document.instance.valid else "under"
            return Judged(document.instance, verdict, document, describe_walk(walk, document.tokens, vocab))
    return Judged(documents[0].instance, "ok", None, "")


def _compile(engine: Engine, prepared: PreparedSchema, vocab: Vocabulary,
             config: CheckConfig) -> tuple[Acceptor | Refusal, float]:
    schema = prepared.schema
    start = time.perf_counter()
    try:
        # a boolean schema is a schema too: engines read the JSON text
        return engine.acceptor(cast(Schema, schema.schema), vocab, config.compile_timeout_s), \
            time.perf_counter() - start
    except UnsupportedSchemaError as exc:
        reason = exc.reason
    except UsageError:
        raise
    except Exception as exc:  # noqa: BLE001 - an engine crashing on a schema refuses it; the reason says how
        reason = f"unexpected {type(exc).__name__} while compiling: {' '.join(str(exc).split())[:400]}"
    elapsed = time.perf_counter() - start
    limit = config.compile_timeout_s
    timed_out = limit is not None and elapsed >= limit
    return Refusal(schema_id=schema.id, group=schema.group, reason=reason, timed_out=timed_out), elapsed


def _check_schema(engine: Engine, prepared: PreparedSchema, vocab: Vocabulary, config: CheckConfig) -> SchemaOutcome:
    compiled, seconds = _compile(engine, prepared, vocab, config)
    if isinstance(compiled, Refusal):
        return SchemaOutcome(prepared.schema, compiled, seconds, [], [])
    try:
        judged = [_judge(compiled, documents, vocab) for documents in prepared.documents]
        masks = compiled.mask_seconds(prepared.mask_stream, prepared.mask_at)
    finally:
        compiled.close()
    return SchemaOutcome(prepared.schema, None, seconds, judged, masks)


#: compiled once per engine before the timed work: one-time costs (llguidance's
#: tokenizer bridge, outlines' vocabulary and build process, lazy mask tables)
#: are not any schema's compile or mask time; they are reported as setup time
_WARM_UP_SCHEMA: Schema = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}


def _warm_up(engine: Engine, vocab: Vocabulary) -> float:
    start = time.perf_counter()
    try:
        acceptor = engine.acceptor(_WARM_UP_SCHEMA, vocab)
    except UnsupportedSchemaError:
        return time.perf_counter() - start
    try:
        tokens = tuple(vocab.tokenize('{"a":"b"}'))
        acceptor.walk(tokens)
        acceptor.mask_seconds(tokens, (0, len(tokens)))
    finally:
        acceptor.close()
    return time.perf_counter() - start


@dataclass
class _Context:
    vocab: Vocabulary
    prepared: dict[str, list[PreparedSchema]]
    sources: list[CheckSource]
    config: CheckConfig
    tick: Tick
    store: OutcomeStore | None


def _slow_note(outcomes: list[SchemaOutcome], limit: float | None) -> str:
    """What makes an engine slow, for the progress line ("" when nothing is)."""
    slow = [o for o in outcomes if o.compile_seconds >= SLOW_COMPILE_S]
    if not slow:
        return ""
    stopped = sum(o.refusal is not None and o.refusal.timed_out for o in slow)
    at_limit = f", {stopped} stopped at the {limit:g} s limit" if stopped and limit is not None else ""
    return f" (slow: {len(slow)} compile(s) took {SLOW_COMPILE_S:g} s or more{at_limit})"


def _source_outcomes(engine: Engine, name: str, source: CheckSource, ctx: _Context) -> tuple[list[SchemaOutcome], int]:
    """(outcomes, how many were read from the store)."""
    version, outcomes, resumed = engine.version(), [], 0
    for schema in ctx.prepared[source.name]:
        outcome = ctx.store.get(name, version, source.name, schema) if ctx.store else None
        if outcome is None:
            outcome = _check_schema(engine, schema, ctx.vocab, ctx.config)
            if ctx.store is not None:
                ctx.store.put(name, version, source.name, schema, outcome)
        else:
            resumed += 1
        outcomes.append(outcome)
        ctx.tick(f"{name} {source.name}{_slow_note(outcomes, ctx.config.compile_timeout_s)}", 1)
    return outcomes, resumed


def _check_engine(name: str, ctx: _Context) -> EngineResult:
    engine = engines.get(name)()
    missing = engine.availability()
    drafts = list(engine.json_schema_drafts)
    if missing is not None:
        return EngineResult(engine=name, version=None, available=False, reason=missing, drafts=drafts,
                            setup_seconds=0.0, sources=[])
    setup = _warm_up(engine, ctx.vocab)
    results, resumed = [], 0
    for source in _runs(engine, ctx.sources, ctx.config):
        start = time.perf_counter()
        outcomes, from_store = _source_outcomes(engine, name, source, ctx)
        resumed += from_store
        results.append(summarise(source, outcomes, time.perf_counter() - start))
    return EngineResult(engine=name, version=engine.version(), available=True, reason=None,
                        drafts=drafts, setup_seconds=round(setup, 3), sources=results, resumed=resumed)


def run_engine_check(
    vocab: Vocabulary, sources: list[CheckSource], config: CheckConfig, tick: Tick | None = None,
    store: OutcomeStore | None = None,
) -> EngineCheckReport:
    """Check every selected engine on every source (``tick(label, steps)``
    reports progress in the units of ``check_steps``); with a ``store``, each
    schema's outcome is kept as it is made and one kept earlier is reused."""
    if config.mask_positions < 0:
        raise UsageError("--mask-positions must be 0 or more")
    started = time.perf_counter()
    names = _engine_names(config)
    step = tick or (lambda _label, _steps: None)
    prepared = {s.name: prepare(s, vocab, config.serialisations, config.mask_positions) for s in sources}
    ctx = _Context(vocab, prepared, sources, config, step, store)
    results = [_check_engine(name, ctx) for name in names]
    settings = CheckSettings(
        engines=names, sources=[s.name for s in sources], serialisations=list(config.serialisations),
        mask_positions=config.mask_positions, compile_timeout_s=config.compile_timeout_s, limit=config.limit,
        left_out=left_out(config),
    )
    excluded = {s.name: [f"{e.id}: {e.reason}" for e in s.excluded] for s in sources if s.excluded}
    return EngineCheckReport(
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        settings=settings,
        tokenizer=TokenizerInfo(model_file=Path(vocab.key).name, n_vocab=vocab.n_vocab),
        engines=results,
        excluded=excluded,
        seconds=round(time.perf_counter() - started, 3),
    )


def attach_probe(report: EngineCheckReport, probe: ProbeReport, where: str) -> EngineCheckReport:
    """The report with each engine's keyword statuses from a probe run (the
    model's view of the same keywords), so one matrix per engine shows both."""
    statuses = {p.engine: {k.keyword: k.status for k in p.keywords} for p in probe.engines if p.output_format == "json"}
    model = probe.model.get("model_file") or probe.model.get("model") or "?"
    engines_ = [e.model_copy(update={"probe": statuses.get(e.engine, {})}) for e in report.engines]
    return report.model_copy(update={"engines": engines_, "probe_source": f"{where} (model {model}, {probe.created})"})
