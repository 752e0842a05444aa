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
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from conformbench._version import __version__
from conformbench.errors import UsageError
from conformbench.files import file_sha256
from conformbench.importers.writing import file_created, write_replay
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


@dataclass(frozen=True)
class InspectImportSummary:
    replay: Path
    logs: int
    #: task -> condition keys imported
    conditions: dict[str, list[str]]
    generations: int
    errors: int


def _read(path: Path) -> Any:
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise UsageError("import inspect needs Inspect AI: pip install 'conformbench[inspect]'") from None
    if not path.is_file():
        raise UsageError(f"cannot read Inspect log {path}: no such file")
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
    return log


def _prompt(sample: Any) -> Prompt:
    raw = sample.input if isinstance(sample.input, list) else []
    messages = tuple(Message(m.role, m.text) for m in raw if m.role in ("system", "user", "assistant"))
    return Prompt(messages or (Message("user", str(sample.input)),))


def _generation(sample: Any, task: str, model: str, path: Path) -> tuple[Item, GenerationRecord]:
    meta = sample.metadata or {}
    try:
        item = Item(**meta[ITEM_KEY])
        condition = Condition(**meta[CONDITION_KEY])
    except (KeyError, TypeError):
        raise UsageError(f"{path}: sample {sample.id} carries no conformbench item and condition") from None
    output = sample.output
    text = output.completion if output is not None else ""
    finish: _Finish = "error" if sample.error is not None else _FINISH.get(getattr(output, "stop_reason", ""), "stop")
    usage = getattr(output, "usage", None)
    return item, GenerationRecord(
        task=task, model=model, item_id=item.id, condition=condition, prompt=_prompt(sample), text=text,
        finish_reason=finish, error=sample.error.message if sample.error is not None else None,
        prompt_tokens=getattr(usage, "input_tokens", 0) or 0,
        completion_tokens=getattr(usage, "output_tokens", 0) or 0,
        seconds=float(sample.total_time or 0.0),
        # Inspect's epochs (``--epochs K``) are our samples: epoch e is sample e - 1
        sample=max(int(getattr(sample, "epoch", 1) or 1) - 1, 0))


def _task_spec(meta: dict[str, Any], arms: list[str]) -> TaskSpec:
    options = meta.get("options") or {}
    return TaskSpec(name=str(meta["task"]), n=meta.get("n"), arms=arms, engines=[SERVER_ENGINE],
                    schema_formats=list(options.get("schema_formats", [])),
                    output_formats=list(options.get("output_formats", [])),
                    max_tokens=meta.get("max_tokens"))


def _decoding(logs: list[Any], gens: list[GenerationRecord]) -> DecodingSpec:
    """The logs' one temperature (tasks made before it was a parameter: 0)
    and their samples per item (Inspect's epochs)."""
    temperatures = {float(log.eval.metadata[TASK_KEY].get("temperature", 0.0)) for log in logs}
    if len(temperatures) > 1:
        raise UsageError(f"the logs were decoded at temperatures {', '.join(map(str, sorted(temperatures)))}; "
                         "import each apart")
    return DecodingSpec(temperature=temperatures.pop(), samples=1 + max((g.sample for g in gens), default=0))


def import_inspect(sources: list[Path], out_dir: Path) -> InspectImportSummary:
    """Write ``out_dir/replay.jsonl`` from logs of conformbench's Inspect tasks (one model)."""
    if not sources:
        raise UsageError("import inspect needs at least one log")
    if (out_dir / REPLAY_NAME).exists():
        raise UsageError(f"{out_dir / REPLAY_NAME} already exists; import into an empty directory")
    logs = [(path, _read(path)) for path in sources]
    models = {log.eval.model for _, log in logs}
    if len(models) > 1:
        raise UsageError(f"the logs are of {len(models)} models ({', '.join(sorted(models))}); import each apart")
    label = models.pop().replace("/", "_")
    items: dict[tuple[str, str], Item] = {}
    gens: list[GenerationRecord] = []
    specs: dict[str, tuple[dict[str, Any], list[str]]] = {}
    dialects: set[str] = set()
    for path, log in logs:
        meta = log.eval.metadata[TASK_KEY]
        task = str(meta["task"])
        dialects.add(str(meta.get("dialect")))
        specs.setdefault(task, (meta, []))[1].append(str(meta["arm"]))
        for sample in log.samples or []:
            item, gen = _generation(sample, task, label, path)
            items.setdefault((task, item.id), item)
            gens.append(gen)
    spec = RunSpec(models=[ModelSpec(label=label, backend="openai")],
                   tasks=[_task_spec(meta, arms) for meta, arms in specs.values()],
                   decoding=_decoding([log for _, log in logs], gens))
    digests = [file_sha256(p) for p in sources]
    header = ReplayHeader(run_id=f"inspect-{hashlib.sha256(''.join(digests).encode()).hexdigest()[:24]}",
                          created=file_created(sources[0]), conformbench_version=__version__,
                          spec=spec.replay_dict())
    canary = {SERVER_ENGINE: {"passed": True, "engine": SERVER_ENGINE, "source": (
        "the Inspect task's setup step (it fails every constrained sample unless the provider forces a "
        f"canary constant; dialect {', '.join(sorted(dialects))})")}}
    record = ModelRecord(label=label, backend="openai", canary=canary, metadata={
        "imported_from": "inspect_ai", "inspect_model": logs[0][1].eval.model,
        "source_files": [p.name for p in sources], "source_sha256": digests})
    path = write_replay(out_dir, header, [record, *(ItemRecord(task=t, item=i) for (t, _), i in items.items()),
                                          *gens])
    return InspectImportSummary(
        replay=path, logs=len(logs), conditions={t: sorted({g.condition.key for g in gens if g.task == t})
                                                 for t in specs},
        generations=len(gens), errors=sum(g.finish_reason == "error" for g in gens))
