"""Import lm-evaluation-harness ``jsonschema_bench`` samples
(``samples_<task>_<date>.jsonl``, written with ``--log_samples``) as a
conformbench replay of the ConCodeEval ``generation`` task, condition
``json->json/0shot/prompt_only[schema]``: each doc's ``json_schema`` is the
item's schema and the raw response (``resps[0][0]``) the answer, so
``score`` reads it with our strict parser and full validator.

lm-eval's own reading differs: it extracts with
``text.strip().strip("```").strip("json")``, which strips characters, not a
fence (a bare ``null`` becomes ``ull`` and is scored invalid), and it
validates with Draft 2020-12 whatever the schema's ``$schema`` says, formats
asserted. Every item where our verdict and its ``json_validity`` /
``schema_compliance`` differ is listed with the reason
(``OUT/lm_eval_differences.json``); ours is taken with formats asserted,
as theirs, so a difference is one of reading, not of the format option."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from conformbench._version import __version__
from conformbench.errors import UsageError
from conformbench.files import file_sha256, jsonl_lines, read_text_file, write_files
from conformbench.importers.writing import file_created, write_replay
from conformbench.records.items import Condition, Item, ItemScore
from conformbench.records.prompt import Message, Prompt
from conformbench.records.replay import GenerationRecord, ItemRecord, ModelRecord, ReplayHeader
from conformbench.records.replay_file import REPLAY_NAME
from conformbench.records.spec import ModelSpec, RunSpec, TaskSpec
from conformbench.schemas.external import SchemaTooDeepError, loads_schema
from conformbench.tasks.base import Task, tasks

__all__ = ["DIFFERENCES_NAME", "Difference", "LmEvalSummary", "import_lm_eval"]

DIFFERENCES_NAME = "lm_eval_differences.json"
_MAX_BYTES = 256 * 1024 * 1024
_TASK = "generation"
_CONDITION = Condition.of("prompt_only", "schema", None, {"schema_format": "json", "output_format": "json", "shots": 0})


class LmEvalDoc(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)
    json_schema: str
    unique_id: str | None = None


class LmEvalSample(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)
    doc_id: int | str
    doc: LmEvalDoc
    resps: list[list[str]] = Field(min_length=1)
    filtered_resps: list[Any] = Field(default_factory=list)
    arguments: dict[str, Any] | list[Any] | None = None
    #: lm-eval's per-sample metrics: 0 or 1 (a NaN or 7 is not a verdict)
    json_validity: float | None = Field(default=None, ge=0, le=1, allow_inf_nan=False)
    schema_compliance: float | None = Field(default=None, ge=0, le=1, allow_inf_nan=False)


@dataclass(frozen=True)
class Difference:
    item_id: str
    ours: str
    theirs: str
    why: str


@dataclass(frozen=True)
class LmEvalSummary:
    replay: Path
    items: int
    #: lm-eval task name -> samples read
    tasks: dict[str, int]
    differences: int
    differences_file: Path
    #: schema compliance by lm-eval's metric (mean), and by ours (formats asserted)
    theirs_compliance: float | None
    ours_compliance: float


def _lm_task(path: Path) -> str:
    name = path.stem
    if not name.startswith("samples_"):
        raise UsageError(f"{path}: not an lm-eval samples file (expected samples_<task>_<date>.jsonl)")
    task, _, _ = name.removeprefix("samples_").rpartition("_")
    return task or name.removeprefix("samples_")


def _read(path: Path) -> list[LmEvalSample]:
    text = read_text_file(path, "lm-eval samples file", _MAX_BYTES)
    out: list[LmEvalSample] = []
    for number, raw in enumerate(jsonl_lines(text), start=1):
        if not raw.strip():
            continue
        try:
            out.append(LmEvalSample.model_validate_json(raw))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "line"
            raise UsageError(f"{path}:{number}: not an lm-eval jsonschema_bench sample "
                             f"({where}: {first['msg']})") from None
    if not out:
        raise UsageError(f"{path} holds no samples")
    return out


def _item(lm_task: str, sample: LmEvalSample, path: Path) -> Item:
    try:
        schema = loads_schema(sample.doc.json_schema)
    except SchemaTooDeepError as exc:  # before json.loads: no recursion limit is ever reached later
        raise UsageError(f"{path}: doc {sample.doc_id}: json_schema is {exc}") from None
    except (json.JSONDecodeError, RecursionError):
        raise UsageError(f"{path}: doc {sample.doc_id}: json_schema is not JSON") from None
    if not isinstance(schema, dict | bool):
        raise UsageError(f"{path}: doc {sample.doc_id}: json_schema is not a JSON Schema (object or boolean)")
    item_id = f"{lm_task}/{sample.doc.unique_id or sample.doc_id}"
    return Item(id=item_id, input={"schema_id": item_id, "schema": schema,
                                   "renderings": {"json": sample.doc.json_schema}, "shots": []},
                meta={"lm_eval_task": lm_task, "doc_id": sample.doc_id})


def _prompt(sample: LmEvalSample, task: Task, item: Item) -> Prompt:
    """The prompt lm-eval sent (its first generation argument), else ours."""
    args = sample.arguments
    first = next(iter(args.values()), None) if isinstance(args, dict) else None
    text = first.get("arg_0") if isinstance(first, dict) else None
    return Prompt((Message("user", text),)) if isinstance(text, str) else task.prompt(item, _CONDITION)


def _verdict(valid: bool | None, parsed: bool) -> str:
    return "valid" if valid else ("invalid" if parsed else "not JSON")


def _difference(item: Item, ours: ItemScore, sample: LmEvalSample) -> Difference | None:
    their_json, their_valid = sample.json_validity, sample.schema_compliance
    if their_valid is None:
        return None
    theirs = "valid" if their_valid >= 1 else ("invalid" if their_json else "not JSON")
    mine = _verdict(ours.valid, ours.parsed)
    if mine == theirs:
        return None
    if ours.parsed and their_json == 0:
        why = ('lm-eval extracts with .strip("```").strip("json"), which strips characters, not a fence: '
               "the JSON is broken before it is parsed")
    elif not ours.parsed:
        why = f"we read the answer strictly as JSON: {ours.note}"
    else:
        why = ("the validators disagree: lm-eval always uses Draft 2020-12 (formats asserted); we use the "
               "schema's own $schema draft" + (f" ({ours.note})" if ours.note else ""))
    return Difference(item.id, mine, theirs, why)


@dataclass
class _Collected:
    items: list[Item] = field(default_factory=list)
    gens: list[GenerationRecord] = field(default_factory=list)
    diffs: list[Difference] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    theirs: list[float] = field(default_factory=list)
    ours_valid: int = 0


def _collect(sources: list[Path], task: Task, strict: Task, model: str) -> _Collected:
    got = _Collected()
    seen: set[str] = set()
    for path in sources:
        lm_task = _lm_task(path)
        for sample in _read(path):
            item = _item(lm_task, sample, path)
            if item.id in seen:
                raise UsageError(f"{path}: doc {sample.doc_id} appears twice ({item.id})")
            seen.add(item.id)
            text = sample.resps[0][0] if sample.resps[0] else ""
            got.items.append(item)
            got.gens.append(GenerationRecord(task=_TASK, model=model, item_id=item.id, condition=_CONDITION,
                                             prompt=_prompt(sample, task, item), text=text))
            scored = strict.score(item, _CONDITION, text, False)
            got.ours_valid += bool(scored.valid)
            if sample.schema_compliance is not None:
                got.theirs.append(sample.schema_compliance)
            diff = _difference(item, scored, sample)
            if diff is not None:
                got.diffs.append(diff)
            got.counts[lm_task] = got.counts.get(lm_task, 0) + 1
    return got


def import_lm_eval(sources: list[Path], out_dir: Path, *, model: str = "lm-eval") -> LmEvalSummary:
    """Write ``out_dir/replay.jsonl`` and ``out_dir/lm_eval_differences.json``."""
    if not sources:
        raise UsageError("import lm-eval needs at least one samples file")
    if (out_dir / REPLAY_NAME).exists():
        raise UsageError(f"{out_dir / REPLAY_NAME} already exists; import into an empty directory")
    task_spec = TaskSpec(name=_TASK, arms=["prompt_only"], engines=[], schema_formats=["json"],
                         output_formats=["json"], shots=[0])
    spec = RunSpec(models=[ModelSpec(label=model, backend="imported")], tasks=[task_spec])
    options = spec.task_options(task_spec)
    # lm-eval asserts formats: our verdict for the comparison does too
    got = _collect(sources, tasks.get(_TASK)(options), tasks.get(_TASK)(replace(options, format_assertion=True)),
                   model)
    digests = [file_sha256(p) for p in sources]
    header = ReplayHeader(run_id=f"lm-eval-{hashlib.sha256(''.join(digests).encode()).hexdigest()[:24]}",
                          created=file_created(sources[0]), conformbench_version=__version__,
                          spec=spec.replay_spec())
    record = ModelRecord(label=model, backend="imported", metadata={
        "imported_from": "lm-evaluation-harness", "source_files": [p.name for p in sources],
        "source_sha256": digests, "lm_eval_tasks": got.counts})
    path = write_replay(out_dir, header, [record, *(ItemRecord(task=_TASK, item=i) for i in got.items),
                                          *got.gens])
    diff_path = out_dir / DIFFERENCES_NAME
    write_files({diff_path: json.dumps([asdict(d) for d in got.diffs], indent=2) + "\n"})  # whole or not at all
    return LmEvalSummary(replay=path, items=len(got.items), tasks=got.counts, differences=len(got.diffs),
                         differences_file=diff_path,
                         theirs_compliance=sum(got.theirs) / len(got.theirs) if got.theirs else None,
                         ours_compliance=got.ours_valid / len(got.items))
