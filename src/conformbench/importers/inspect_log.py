"""Import Inspect AI logs of conformbench's Inspect tasks
(``inspect eval conformbench/gsm8k_arms ...``; see
``conformbench.integrations.inspect_tasks``) as a conformbench replay, so
the paired bootstrap, McNemar, ledger and report apply
(``conformbench import inspect LOG... --out DIR``).

Each sample's metadata holds the item and the condition it ran under; the
log's task metadata the task and its options. A log whose run did not
succeed (a failed canary fails every sample of a constrained arm) is
refused with Inspect's error. Inspect's epochs are our samples (epoch e
is sample e - 1, the header's ``[decoding] samples`` their count), so a
log run with ``--epochs K`` scores with the report's sampling section
instead of K records of one key. Logs read through ``inspect_ai.log``,
the maintainers' supported API, never the raw files."""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from conformbench._version import __version__
from conformbench.errors import UsageError
from conformbench.files import MAX_INFLATED_BYTES, check_zip_file, file_sha256, read_bytes_file, regular_file
from conformbench.importers.writing import file_created, write_replay
from conformbench.records.base import INT_BOUND
from conformbench.records.items import Condition, Item
from conformbench.records.prompt import Message, Prompt
from conformbench.records.replay import GenerationRecord, ItemRecord, ModelRecord, ReplayHeader
from conformbench.records.replay_file import REPLAY_NAME
from conformbench.records.spec import SERVER_ENGINE, DecodingSpec, ModelSpec, RunSpec, TaskSpec

__all__ = ["InspectImportSummary", "import_inspect"]

#: the metadata keys conformbench's Inspect tasks write (integrations/inspect_tasks.py;
#: a test checks the two agree: the layers keep the packages apart)
ITEM_KEY, CONDITION_KEY, TASK_KEY = "conformbench_item", "conformbench_condition", "conformbench_task"
_Finish = Literal["stop", "length", "error"]
#: Inspect stop reason -> finish reason (anything else ended by itself: stop)
_FINISH: dict[str, _Finish] = {"max_tokens": "length", "model_length": "length"}
M = TypeVar("M", bound=BaseModel)


@dataclass
class _Collected:
    items: dict[tuple[str, str], Item] = field(default_factory=dict)
    gens: list[GenerationRecord] = field(default_factory=list)
    specs: dict[str, tuple[_TaskMeta, list[str]]] = field(default_factory=dict)
    dialects: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class InspectImportSummary:
    replay: Path
    logs: int
    #: task -> condition keys imported
    conditions: dict[str, list[str]]
    generations: int
    errors: int


class _Strict(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True, allow_inf_nan=False)


class _Options(_Strict):
    schema_formats: list[str] = Field(default_factory=list)
    output_formats: list[str] = Field(default_factory=list)


class _TaskMeta(_Strict):
    """The task metadata conformbench's Inspect tasks write (every field an
    imported replay relies on, checked: a log is a file from anywhere)."""

    task: str = Field(min_length=1)
    arm: str = Field(min_length=1)
    n: int | None = Field(default=None, ge=1)
    max_tokens: int | None = Field(default=None, ge=1)
    temperature: float = Field(default=0.0, ge=0.0)
    dialect: str | None = None
    options: _Options = Field(default_factory=_Options)


class _ItemMeta(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
    id: str = Field(min_length=1)
    input: dict[str, Any]
    target: Any = None
    meta: dict[str, Any] = Field(default_factory=dict)


class _ConditionMeta(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    arm: str = Field(min_length=1)
    contract: str | None = None
    engine: str | None = None
    schema_format: str | None = None
    output_format: str | None = None
    shots: int = Field(default=0, ge=0)
    #: the task's own axes (``Condition.axes``; absent where it has none)
    axes: tuple[tuple[str, str | int], ...] = ()
    #: the mode of an arm that takes one (``tools[required]``; absent otherwise)
    mode: str | None = None


_AS_CONDITION: TypeAdapter[Condition] = TypeAdapter(Condition)


def _checked(model: type[M], value: Any, where: str) -> M:
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "value"
        raise UsageError(f"{where}: {field}: {first['msg']}") from None


def _check_file(path: Path) -> None:
    """The log is a regular file within the byte limit, and a ``.eval`` zip
    inflates to at most MAX_INFLATED_BYTES, before Inspect reads it."""
    if not path.exists():
        raise UsageError(f"cannot read Inspect log {path}: no such file")
    if path.suffix == ".eval":
        check_zip_file(path, "Inspect log")
    else:
        regular_file(path, f"Inspect log {path}")
        read_bytes_file(path, "Inspect log", MAX_INFLATED_BYTES)


def _read(path: Path) -> Any:
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise UsageError("import inspect needs Inspect AI: pip install 'conformbench[inspect]'") from None
    _check_file(path)
    try:
        log = read_eval_log(str(path))
    except Exception as exc:  # noqa: BLE001 - a foreign file: any failure is the user's input
        raise UsageError(f"{path}: not an Inspect log ({type(exc).__name__}: {str(exc)[:120]})") from None
    meta = (log.eval.metadata or {}).get(TASK_KEY)
    if not isinstance(meta, dict):
        raise UsageError(f"{path}: not a log of a conformbench Inspect task (task {log.eval.task}); "
                         "run one with: inspect eval conformbench/gsm8k_arms --model ...")
    if log.status != "success":
        why = log.error.message if log.error is not None else log.status
        raise UsageError(f"{path}: the Inspect run did not succeed ({log.status}): {' '.join(str(why).split())[:300]}")
    return log, _checked(_TaskMeta, meta, f"{path}: task metadata {TASK_KEY}")


def _prompt(sample: Any) -> Prompt:
    raw = sample.input if isinstance(sample.input, list) else []
    messages = tuple(Message(m.role, m.text) for m in raw if m.role in ("system", "user", "assistant"))
    return Prompt(messages or (Message("user", str(sample.input)),))


def _count(value: Any, what: str, where: str) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < INT_BOUND:
        raise UsageError(f"{where}: {what} {value!r} is not a count")
    return value


def _seconds(value: Any, where: str) -> float:
    if value is None:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, int | float) or not (math.isfinite(value) and 0 <= value < 1e18):
        raise UsageError(f"{where}: total_time {value!r} is not a number of seconds")
    return float(value)


def _generation(sample: Any, task: str, model: str, path: Path) -> tuple[Item, GenerationRecord]:
    epoch = getattr(sample, "epoch", 1) or 1
    where = f"{path}: sample {sample.id} (epoch {epoch})"
    meta = sample.metadata or {}
    if not isinstance(meta.get(ITEM_KEY), dict) or not isinstance(meta.get(CONDITION_KEY), dict):
        raise UsageError(f"{path}: sample {sample.id} carries no conformbench item and condition")
    item = Item(**_checked(_ItemMeta, meta[ITEM_KEY], f"{where}: {ITEM_KEY}").model_dump())
    fields = _checked(_ConditionMeta, meta[CONDITION_KEY], f"{where}: {CONDITION_KEY}").model_dump()
    condition = _AS_CONDITION.validate_python(fields)  # its own fields read as axes (the layout it was written in)
    output = sample.output
    text = output.completion if output is not None else ""
    if not isinstance(text, str):
        raise UsageError(f"{where}: the completion is not text")
    finish: _Finish = "error" if sample.error is not None else _FINISH.get(getattr(output, "stop_reason", ""), "stop")
    usage = getattr(output, "usage", None)
    if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 1:
        raise UsageError(f"{where}: epoch {epoch!r} is not 1 or more")
    return item, GenerationRecord(
        task=task, model=model, item_id=item.id, condition=condition, prompt=_prompt(sample), text=text,
        finish_reason=finish, error=sample.error.message if sample.error is not None else None,
        prompt_tokens=_count(getattr(usage, "input_tokens", 0), "input_tokens", where),
        completion_tokens=_count(getattr(usage, "output_tokens", 0), "output_tokens", where),
        seconds=_seconds(sample.total_time, where),
        # Inspect's epochs (``--epochs K``) are our samples: epoch e is sample e - 1
        sample=epoch - 1)


def _task_spec(meta: _TaskMeta, arms: list[str]) -> TaskSpec:
    return TaskSpec(name=meta.task, n=meta.n, arms=arms, engines=[SERVER_ENGINE],
                    schema_formats=list(meta.options.schema_formats),
                    output_formats=list(meta.options.output_formats), max_tokens=meta.max_tokens)


def _decoding(metas: list[_TaskMeta], gens: list[GenerationRecord]) -> DecodingSpec:
    """The logs' one temperature (tasks made before it was a parameter: 0)
    and their samples per item (Inspect's epochs)."""
    temperatures = {meta.temperature for meta in metas}
    if len(temperatures) > 1:
        raise UsageError(f"the logs were decoded at temperatures {', '.join(map(str, sorted(temperatures)))}; "
                         "import each apart")
    return DecodingSpec(temperature=temperatures.pop(), samples=1 + max((g.sample for g in gens), default=0))


def _collect(logs: list[tuple[Path, Any, _TaskMeta]], label: str) -> _Collected:
    """Every sample as an item and a generation; a generation key seen
    twice (the same item, condition and epoch in two logs, or twice in
    one) is refused, never silently superseded."""
    got = _Collected()
    seen: dict[tuple[str, str, str, int], Path] = {}
    for path, log, meta in logs:
        got.dialects.add(str(meta.dialect))
        got.specs.setdefault(meta.task, (meta, []))[1].append(meta.arm)
        for sample in log.samples or []:
            item, gen = _generation(sample, meta.task, label, path)
            key = (gen.task, gen.item_id, gen.condition.key, gen.sample)
            if key in seen:
                raise UsageError(f"{path}: item {gen.item_id!r} under {gen.condition.key} (epoch {gen.sample + 1}) "
                                 f"appears twice (also in {seen[key]}); import each run apart")
            seen[key] = path
            got.items.setdefault((meta.task, item.id), item)
            got.gens.append(gen)
    return got


def import_inspect(sources: list[Path], out_dir: Path) -> InspectImportSummary:
    """Write ``out_dir/replay.jsonl`` from logs of conformbench's Inspect tasks (one model)."""
    if not sources:
        raise UsageError("import inspect needs at least one log")
    if (out_dir / REPLAY_NAME).exists():
        raise UsageError(f"{out_dir / REPLAY_NAME} already exists; import into an empty directory")
    logs = [(path, *_read(path)) for path in sources]
    models = {log.eval.model for _, log, _ in logs}
    if len(models) > 1:
        raise UsageError(f"the logs are of {len(models)} models ({', '.join(sorted(models))}); import each apart")
    label = models.pop().replace("/", "_")
    got = _collect(logs, label)
    items, gens, specs, dialects = got.items, got.gens, got.specs, got.dialects
    spec = RunSpec(models=[ModelSpec(label=label, backend="openai")],
                   tasks=[_task_spec(meta, arms) for meta, arms in specs.values()],
                   decoding=_decoding([meta for _, _, meta in logs], gens))
    digests = [file_sha256(p) for p in sources]
    header = ReplayHeader(run_id=f"inspect-{hashlib.sha256(''.join(digests).encode()).hexdigest()[:24]}",
                          created=file_created(sources[0]), conformbench_version=__version__,
                          spec=spec.replay_spec())
    canary = {SERVER_ENGINE: {"passed": True, "engine": SERVER_ENGINE, "source": (
        "the Inspect task's setup step (it fails every constrained sample unless the provider forces a "
        f"canary constant; dialect {', '.join(sorted(dialects))})")}}
    record = ModelRecord(label=label, backend="openai", canary=canary, metadata={
        "imported_from": "inspect_ai", "inspect_model": str(logs[0][1].eval.model),
        "source_files": [p.name for p in sources], "source_sha256": digests})
    path = write_replay(out_dir, header, [record, *(ItemRecord(task=t, item=i) for (t, _), i in items.items()),
                                          *gens])
    return InspectImportSummary(
        replay=path, logs=len(logs), conditions={t: sorted({g.condition.key for g in gens if g.task == t})
                                                 for t in specs},
        generations=len(gens), errors=sum(g.finish_reason == "error" for g in gens))
