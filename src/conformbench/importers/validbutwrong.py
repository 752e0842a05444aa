"""Import a validbutwrong replay (0.1.x; tasks ``gsm8k`` and ``bfcl-simple``)
as a conformbench replay, so ``conformbench score`` rescores its generations.

A validbutwrong replay is JSON Lines: ``{"meta": {...}}`` (task, engine,
model file and sha256, per-turn token budgets, versions, hardware), then one
line per item, ``{"id", "arms": {arm key: {"text", "seconds",
"compile_seconds", "n_tokens"[, "reuses"][, "unsupported_schema"]}}}``.
It stores no prompts: they are rebuilt with the task's ``validbutwrong``
prompt style, which reproduces validbutwrong 0.1.1's prompts byte for byte
(tested against the installed package), so each generation keeps the prompt
that was really sent. What the import keeps and infers:

- arms: ``prompt_json[S]`` is ``prompt_only[S]``; ``constrained[S]`` and
  ``reason_then_constrain[S]`` get the engine (``outlines`` is ours,
  validbutwrong's ``llamacpp`` is llama.cpp's GBNF grammar: ``gbnf``);
- finish reason ``length`` where the token count reached the turn's budget
  (validbutwrong records counts, not finish reasons; for outlines-constrained
  arms its count re-tokenises the text); ``excluded`` where the engine could
  not compile the schema;
- the whole meta line, the source file's sha256 and the per-turn budgets go
  in the model record; the run spec holds the budgets it can (free turn as
  the task's ``max_tokens``, JSON turn as ``decoding.max_tokens``).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from conformbench._version import __version__
from conformbench.errors import UsageError
from conformbench.files import jsonl_lines, read_text_file
from conformbench.importers.writing import write_replay
from conformbench.records.items import Condition, Item
from conformbench.records.replay import GenerationRecord, ItemRecord, ModelRecord, ReplayHeader
from conformbench.records.spec import DecodingSpec, ModelSpec, RunSpec, TaskSpec
from conformbench.registry import did_you_mean
from conformbench.tasks.base import Task, tasks

__all__ = ["ENGINES", "ImportSummary", "VbwReplay", "condition_of", "import_validbutwrong",
           "read_validbutwrong"]

#: validbutwrong engine name -> conformbench engine name
ENGINES: dict[str, str] = {"outlines": "outlines", "llamacpp": "gbnf"}
#: validbutwrong arm name -> conformbench arm
_ARMS: dict[str, str] = {
    "unconstrained": "unconstrained",
    "prompt_json": "prompt_only",
    "constrained": "constrained",
    "reason_then_constrain": "reason_then_constrain",
}
#: conformbench arm -> the validbutwrong token budget of the turn it generates
_TURNS: dict[str, str] = {"unconstrained": "free", "prompt_only": "json", "constrained": "json",
                          "reason_then_constrain": "package"}
_TASKS = ("gsm8k", "bfcl-simple")
_MAX_BYTES = 256 * 1024 * 1024
#: validbutwrong seeds llama.cpp with 42 (greedy decoding makes it moot)
_VBW_SEED = 42


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class VbwArm(_Strict):
    text: str = ""
    seconds: float = 0.0
    compile_seconds: float = 0.0
    n_tokens: int = Field(default=0, ge=0)
    #: the arm whose generation a two-turn arm reused as its first turn
    reuses: str | None = None
    unsupported_schema: str | None = None


class VbwRecord(_Strict):
    id: str = Field(min_length=1)
    arms: dict[str, VbwArm]
    item_seconds: float | None = None


class VbwEngine(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)
    engine: str
    model_file: str = Field(min_length=1)


class VbwMeta(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)
    task: str
    engine: VbwEngine
    max_tokens: dict[str, int]
    model_sha256: str | None = None
    hardware: dict[str, Any] = Field(default_factory=dict)
    started: str | None = None
    selftest_seconds: float | None = None


@dataclass(frozen=True)
class VbwReplay:
    path: Path
    sha256: str
    meta: VbwMeta
    #: the meta line exactly as read (kept whole in the model record)
    raw_meta: dict[str, Any]
    records: list[VbwRecord]


@dataclass(frozen=True)
class ImportSummary:
    replay: Path
    task: str
    model: str
    engine: str
    items: int
    generations: int
    excluded: int
    #: generations whose token count reached their turn's budget
    truncated: int


class _NonFinite(ValueError):
    pass


def _non_json_constant(name: str) -> Any:
    raise _NonFinite(name)


def _line(raw: str, path: Path, lineno: int) -> Any:
    try:
        # Infinity and NaN are not JSON: stored, they would turn into null
        return json.loads(raw, parse_constant=_non_json_constant)
    except (json.JSONDecodeError, RecursionError):
        raise UsageError(f"{path}:{lineno}: not a JSON line") from None
    except _NonFinite as exc:
        raise UsageError(f"{path}:{lineno}: {exc} is not a finite JSON number") from None


def _validated(model: type[BaseModel], data: Any, path: Path, lineno: int) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "line"
        raise UsageError(f"{path}:{lineno}: not a validbutwrong replay line "
                         f"({where}: {first['msg']})") from None


def read_validbutwrong(path: Path) -> VbwReplay:
    """Parse a validbutwrong replay; anything unexpected is a UsageError
    naming the line."""
    text = read_text_file(path, "validbutwrong replay", _MAX_BYTES)
    lines = [(n, raw) for n, raw in enumerate(jsonl_lines(text), start=1) if raw.strip()]
    if not lines:
        raise UsageError(f"{path} is empty")
    first = _line(lines[0][1], path, lines[0][0])
    if not isinstance(first, dict) or not isinstance(first.get("meta"), dict):
        raise UsageError(f"{path}: not a validbutwrong replay (no {{\"meta\": ...}} first line)")
    meta = _validated(VbwMeta, first["meta"], path, lines[0][0])
    records = [_validated(VbwRecord, _line(raw, path, n), path, n) for n, raw in lines[1:]]
    if not records:
        raise UsageError(f"{path} holds no items")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return VbwReplay(path, digest, meta, first["meta"], records)


def condition_of(key: str, engine: str) -> Condition:
    """The conformbench condition of a validbutwrong arm key
    ('prompt_json[answer]' -> prompt_only[answer])."""
    name, _, rest = key.partition("[")
    contract = rest[:-1] if rest.endswith("]") else None
    if name not in _ARMS or bool(rest) != (contract is not None) or contract == "":
        raise UsageError(f"unknown validbutwrong arm {key!r}{did_you_mean(name, list(_ARMS))}")
    arm = _ARMS[name]
    if arm == "unconstrained":
        if contract is not None:
            raise UsageError(f"validbutwrong arm {key!r} cannot have a contract")
        return Condition(arm)
    if contract is None:
        raise UsageError(f"validbutwrong arm {key!r} names no schema")
    return Condition(arm, contract, engine if arm != "prompt_only" else None)


def _budget(replay: VbwReplay, turn: str) -> int:
    value = replay.meta.max_tokens.get(turn)
    if not isinstance(value, int) or value < 1:
        raise UsageError(f"{replay.path}: meta.max_tokens has no '{turn}' budget")
    return value


def _spec(replay: VbwReplay, engine: str, arm_specs: list[str]) -> RunSpec:
    meta = replay.meta
    threads = meta.hardware.get("n_threads")
    model = ModelSpec(label=Path(meta.engine.model_file).stem, backend="llamacpp",
                      model=meta.engine.model_file,
                      threads=threads if isinstance(threads, int) and threads > 0 else None)
    task = TaskSpec(name=meta.task, n=len(replay.records), arms=arm_specs, engines=[engine],
                    params={"prompt_style": "validbutwrong"},
                    max_tokens=_budget(replay, "free"))
    decoding = DecodingSpec(max_tokens=_budget(replay, "json"), temperature=0.0, seed=_VBW_SEED)
    return RunSpec(models=[model], tasks=[task], decoding=decoding)


def _items(task: Task, replay: VbwReplay) -> list[Item]:
    items = task.items()
    ids = [r.id for r in replay.records]
    if [i.id for i in items] != ids:
        raise UsageError(
            f"{replay.path}: its items are not the first {len(ids)} {replay.meta.task} items "
            "in order (validbutwrong runs always take the first N; was the file edited?)")
    return items


def _arm_specs(replay: VbwReplay, engine: str) -> list[str]:
    specs: list[str] = []
    for key in replay.records[0].arms:
        condition = condition_of(key, engine)
        spec = condition.arm if condition.contract is None else f"{condition.arm}[{condition.contract}]"
        specs.append(spec)
    return specs


def _generation(task: Task, model: str, item: Item, record: VbwRecord, key: str,
                replay: VbwReplay, engine: str) -> GenerationRecord:
    arm = record.arms[key]
    condition = condition_of(key, engine)
    free_text: str | None = None
    if condition.arm == "reason_then_constrain":
        first = record.arms.get(arm.reuses or "unconstrained")
        if first is None:
            raise UsageError(f"{replay.path}: item {record.id}: {key} reuses an arm it lacks")
        free_text = first.text
        prompt = task.packaging_prompt(item, condition, free_text)
    else:
        prompt = task.prompt(item, condition)
    budget = _budget(replay, _TURNS[condition.arm])
    base = GenerationRecord(task=task.name, model=model, item_id=item.id, condition=condition,
                            prompt=prompt, free_text=free_text)
    if arm.unsupported_schema is not None:
        return base.model_copy(update={"finish_reason": "excluded",
                                       "excluded": f"{engine}: {arm.unsupported_schema}"})
    return base.model_copy(update={
        "text": arm.text, "completion_tokens": arm.n_tokens, "seconds": arm.seconds,
        "compile_seconds": arm.compile_seconds,
        "finish_reason": "length" if arm.n_tokens >= budget else "stop"})


def _model_record(replay: VbwReplay, label: str, engine: str) -> ModelRecord:
    meta = replay.meta
    metadata = {
        "imported_from": "validbutwrong", "source_file": replay.path.name,
        "source_sha256": replay.sha256, "model_file": meta.engine.model_file,
        "model_sha256": meta.model_sha256, "engine": meta.engine.engine,
        "max_tokens_per_turn": dict(meta.max_tokens), "validbutwrong_meta": replay.raw_meta,
    }
    canary = {engine: {
        "passed": True, "engine": engine,
        "source": "validbutwrong's self test (it refuses to run unless its constraint forces "
                  "a canary constant)", "seconds": meta.selftest_seconds}}
    return ModelRecord(label=label, backend="llamacpp", metadata=metadata, canary=canary)


def import_validbutwrong(source: Path, out_dir: Path) -> ImportSummary:
    """Write ``out_dir/replay.jsonl`` from a validbutwrong replay. The same
    source always gives the same bytes (the run id is the source's sha256)."""
    replay = read_validbutwrong(source)
    meta = replay.meta
    if meta.task not in _TASKS:
        raise UsageError(f"{source}: validbutwrong task {meta.task!r} cannot be imported"
                         f"{did_you_mean(meta.task, list(_TASKS))}; known: {', '.join(_TASKS)}")
    if meta.engine.engine not in ENGINES:
        raise UsageError(f"{source}: unknown validbutwrong engine {meta.engine.engine!r}"
                         f"{did_you_mean(meta.engine.engine, list(ENGINES))}")
    engine = ENGINES[meta.engine.engine]
    spec = _spec(replay, engine, _arm_specs(replay, engine))
    task = tasks.get(meta.task)(spec.tasks[0].options())
    items = _items(task, replay)
    label = spec.models[0].label
    generations = [_generation(task, label, item, record, key, replay, engine)
                   for item, record in zip(items, replay.records) for key in record.arms]
    header = ReplayHeader(run_id=f"validbutwrong-{replay.sha256[:24]}",
                          created=meta.started or "unknown", conformbench_version=__version__,
                          spec=spec.replay_spec(), hardware=dict(meta.hardware))
    path = write_replay(out_dir, header, [_model_record(replay, label, engine),
                                          *(ItemRecord(task=task.name, item=item) for item in items),
                                          *generations])
    return ImportSummary(
        replay=path, task=task.name, model=label, engine=engine, items=len(items),
        generations=len(generations),
        excluded=sum(g.finish_reason == "excluded" for g in generations),
        truncated=sum(g.finish_reason == "length" for g in generations))

