"""Scored replays as Inspect AI eval logs (``conformbench export inspect``),
written through Inspect's own Python API (``inspect_ai.log``) so its viewer
(``inspect view``) and tools read them.

One log per task × model × condition, all tied by one ``eval_set_id``.
Every scored generation is a sample: its messages (the prompt as sent and
the answer), output and finish reason, the scores ``valid``, ``correct`` and
``wrong_but_valid`` (1/0; a score the condition has no notion of is left
out, as report.json says n/a), and metadata: arm, engine, finish reason,
cut / looped / runaway, the violations with keyword and paths. The log's
results hold each rate with its 95% Wilson interval, and its metadata the
condition's report.json row and the paired comparisons it takes part in.
An item an engine could not compile has no sample; the exclusions are in
the results' metadata with their reasons. A run with ``[decoding] samples``
K > 1 gives each item K samples, Inspect's epochs 1..K (epoch s+1 is
sample s); the results' rates stay report.json's, over sample 0, and say so
(the sampling section's pass@k and agreement are in report.json)."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformbench.errors import UsageError
from conformbench.files import atomic_path, inside_folder
from conformbench.records.items import Condition
from conformbench.records.migrations import V2_CELL
from conformbench.records.replay import GenerationRecord, sample_key
from conformbench.records.results import ArmMetrics, Rate, TaskModelResult
from conformbench.runner.ledger import checked_replays
from conformbench.scoring.load import LoadedTable, load_replays
from conformbench.scoring.score import score_table
from conformbench.scoring.table import ScoredGeneration

__all__ = ["HEADLINE", "SCORERS", "InspectExport", "export_inspect"]

#: Inspect scorer name -> the report.json rate it carries; ``correct`` first and
#: declared the headline metric, so the viewer's SCORE column is the task's
#: accuracy in every log (it showed validity where a log has it, accuracy
#: where it has not: two measures in one column)
SCORERS: dict[str, str] = {"correct": "accuracy", "valid": "validity", "wrong_but_valid": "wrong_but_valid"}
HEADLINE = "correct"
_STOP = {"stop": "stop", "length": "max_tokens", "loop": "unknown", "error": "unknown"}


@dataclass(frozen=True)
class InspectExport:
    eval_set_id: str
    logs: tuple[Path, ...]
    samples: int


def _inspect() -> Any:
    try:
        import inspect_ai.log
    except ImportError:
        raise UsageError("export inspect needs Inspect AI: pip install 'conformbench[inspect]'") from None
    return inspect_ai.log


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "x"


def _messages(gen: GenerationRecord | None, text: str) -> list[Any]:
    from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser

    kinds = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}
    prompt = [kinds[m.role](content=m.content) for m in (gen.prompt.messages if gen else ())]
    return [*prompt, ChatMessageAssistant(content=text)]


def _scores(row: ScoredGeneration) -> dict[str, Any]:
    from inspect_ai.scorer import Score

    s = row.score
    values: dict[str, bool | None] = {
        "valid": s.valid, "correct": s.correct,
        "wrong_but_valid": None if s.valid is None or s.correct is None else s.valid and not s.correct}
    return {name: Score(value=1.0 if value else 0.0, answer=None if s.answer is None else json.dumps(s.answer),
                        explanation=s.note)
            for name, value in values.items() if value is not None}


def _condition_fields(c: Condition) -> dict[str, Any]:
    """The condition's axes as the sample metadata has always named them
    (the ConCodeEval tasks' as fields of their own, any other in ``axes``)."""
    own = {name: value for name, value in c.axes if name not in V2_CELL}
    return {"schema_format": c.text_axis("schema_format"), "output_format": c.text_axis("output_format"),
            "shots": c.count_axis("shots"), **({"axes": own} if own else {})}


def _sample_metadata(row: ScoredGeneration, gen: GenerationRecord | None,
                     prompts: dict[str, GenerationRecord]) -> dict[str, Any]:
    c, s = row.condition, row.score
    return {
        "condition": c.key, "arm": c.arm, "contract": c.contract, "engine": c.engine,
        **_condition_fields(c),
        "finish_reason": row.finish_reason, "cut": row.finish_reason == "length",
        "looped": row.finish_reason == "loop", "runaway": row.runaway, "parsed": s.parsed,
        "violations": [{"keyword": v.keyword, "schema_path": v.schema_path,
                        "instance_path": v.instance_path, "position": v.position} for v in s.violations],
        "note": s.note, "unenforced": list(row.unenforced), "completion_tokens": row.completion_tokens,
        "seconds": row.seconds, "free_text": gen.free_text if gen else None,
        # a multi-round arm's answer is its last round (its messages hold a
        # repair's whole conversation); each earlier round, as it was asked
        "round": row.round,
        "earlier_rounds": [_round(e, prompts) for e in row.earlier],
    }


def _round(row: ScoredGeneration, prompts: dict[str, GenerationRecord]) -> dict[str, Any]:
    gen = prompts.get(sample_key(row.condition.key, row.sample, row.round))
    return {"round": row.round, "messages": [{"role": m.role, "content": m.content}
                                              for m in (gen.prompt.messages if gen else ())],
            "text": row.text, "finish_reason": row.finish_reason, "valid": row.score.valid}


def _sample(row: ScoredGeneration, prompts: dict[str, GenerationRecord], model: str) -> Any:
    from inspect_ai.log import EvalSample
    from inspect_ai.model import ModelOutput

    gen = prompts.get(sample_key(row.condition.key, row.sample, row.round))
    messages = _messages(gen, row.text)
    target = row.item.target
    output = ModelOutput.from_content(model=model, content=row.text,
                                      stop_reason=_STOP.get(row.finish_reason, "unknown"))  # type: ignore[arg-type]
    return EvalSample(
        id=row.item_id, epoch=row.sample + 1, input=messages[:-1] or row.text, messages=messages, output=output,
        target="" if target is None else target if isinstance(target, str) else json.dumps(target),
        scores=_scores(row), metadata=_sample_metadata(row, gen, prompts))


def _eval_score(name: str, rate: Rate, epochs: int) -> Any:
    from inspect_ai.log import EvalMetric, EvalScore

    low, high = rate.ci95
    metrics = {"accuracy": EvalMetric(name="accuracy", value=rate.rate),
               "ci95_low": EvalMetric(name="ci95_low", value=low),
               "ci95_high": EvalMetric(name="ci95_high", value=high)}
    over = {} if epochs == 1 else {"over": f"epoch 1 (sample 0) of {epochs}, as report.json's rates"}
    return EvalScore(name=name, scorer=name, scored_samples=rate.n, unscored_samples=0, metrics=metrics,
                     metadata=over or None)


def _results(result: TaskModelResult, arm: ArmMetrics, condition: Condition, samples: list[Any]) -> Any:
    from inspect_ai.log import EvalResults

    epochs = max((s.epoch for s in samples), default=1)
    rates = {name: getattr(arm, field) for name, field in SCORERS.items()}
    comparisons = [c.model_dump(mode="json") for c in result.comparisons
                   if condition.key in (c.from_key, c.to_key)]
    exclusions = [e.model_dump(mode="json") for e in result.exclusions if e.condition == condition.key]
    return EvalResults(
        total_samples=len(samples), completed_samples=len(samples),
        scores=[_eval_score(name, rate, epochs) for name, rate in rates.items() if rate is not None],
        metadata={"conformbench": {"arm": arm.model_dump(mode="json"), "comparisons": comparisons,
                                   "exclusions": exclusions, "correctness_label": result.correctness_label}})


def _viewer(scorers: list[str]) -> Any:
    from inspect_ai.viewer import TaskSamplesColumn, TaskSamplesView, ViewerConfig

    columns = [TaskSamplesColumn(id="sampleId"), TaskSamplesColumn(id="answer"),
               *(TaskSamplesColumn.score(name) for name in scorers), TaskSamplesColumn(id="tokens")]
    # model output is untrusted: the viewer shows it as plain text
    return ViewerConfig(trust_content=False, task_samples_view=TaskSamplesView(name="conformbench", columns=columns))


@dataclass(frozen=True)
class _Context:
    eval_set_id: str
    created: str
    run_id: str
    prompts: dict[tuple[str, str, str, str], GenerationRecord]


def _log(ctx: _Context, loaded: LoadedTable, result: TaskModelResult, condition: Condition) -> Any:
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalPlan,
        EvalPlanStep,
        EvalSpec,
        EvalStats,
        HeadlineMetric,
    )

    table = loaded.table
    model = f"conformbench/{table.model}"
    rows = [r for r in (*table.rows, *table.extra_samples) if r.condition == condition]
    rows.sort(key=lambda r: r.sample)  # epoch by epoch, items in run order within each
    arm = next(a for a in result.arms if a.key == condition.key)
    by_item: dict[str, dict[str, GenerationRecord]] = {}
    for key, gen in ctx.prompts.items():
        if key[:2] == (table.task, table.model):
            by_item.setdefault(key[2], {})[key[3]] = gen
    samples = [_sample(r, by_item.get(r.item_id, {}), model) for r in rows]
    epochs = 1 + max((r.sample for r in rows), default=0)
    items = list(dict.fromkeys(r.item_id for r in rows))
    eval_id = hashlib.sha256(f"{ctx.eval_set_id}/{table.task}/{table.model}/{condition.key}".encode()).hexdigest()[:22]
    scorers = [name for name in SCORERS if getattr(arm, SCORERS[name]) is not None]
    spec = EvalSpec(
        eval_set_id=ctx.eval_set_id, eval_id=eval_id, run_id=ctx.run_id, created=ctx.created,
        task=f"conformbench/{table.task}", task_id=_slug(f"{table.task}-{condition.key}"),
        task_args={"condition": condition.key}, model=model,
        config=EvalConfig(epochs=epochs if epochs > 1 else None),
        dataset=EvalDataset(name=table.task, samples=len(items), sample_ids=items),
        metadata={"conformbench": {"condition": condition.key, "task_info": result.task_info}},
        headline_metric=HeadlineMetric(scorer=HEADLINE, metric="accuracy"),
        viewer=_viewer(scorers))
    plan = EvalPlan(name="conformbench", steps=[EvalPlanStep(solver=condition.arm_key)])
    return EvalLog(version=2, status="success", eval=spec, plan=plan, samples=samples,
                   results=_results(result, arm, condition, samples),
                   stats=EvalStats(started_at=ctx.created, completed_at=ctx.created))


def _write_log(log_api: Any, log: Any, path: Path, log_format: str) -> None:
    """One log written whole or not at all: Inspect writes a temporary file
    beside ``path``, renamed over it (over a link there, never through it)."""
    try:
        with atomic_path(path) as tmp:
            log_api.write_eval_log(log, str(tmp), format=log_format)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None


def export_inspect(replays: list[Path], out: Path, *, log_format: str = "eval") -> InspectExport:
    """Score ``replays`` and write one Inspect log per task × model ×
    condition into ``out`` (``.eval``, or ``.json`` with log_format json)."""
    if log_format not in ("eval", "json"):
        raise UsageError(f"unknown Inspect log format {log_format!r}; known: eval, json")
    log_api = _inspect()
    read = checked_replays(replays)
    loaded = load_replays(read)
    contents = [c for c, _ in read]
    prompts = {g.key: g for c in contents for g in c.generations}
    digest = hashlib.sha256("".join(s.sha256 for s in loaded.sources).encode()).hexdigest()
    ctx = _Context(eval_set_id=f"conformbench-{digest[:22]}", created=contents[0].header.created,
                   run_id=contents[0].header.run_id, prompts=prompts)
    written: list[Path] = []
    samples = 0
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot write {out}: {exc.strerror or exc}") from None
    for table in loaded.tables:
        result = score_table(table)
        for condition in table.table.conditions:
            log = _log(ctx, table, result, condition)
            path = out / f"{_slug(table.table.task)}_{_slug(table.table.model)}_{_slug(condition.key)}.{log_format}"
            _write_log(log_api, log, inside_folder(out, path), log_format)
            written.append(path)
            samples += len(log.samples or [])
    return InspectExport(eval_set_id=ctx.eval_set_id, logs=tuple(written), samples=samples)
