"""Import outputs generated anywhere (``conformbench import outputs``): a
JSONL file of ``{"item_id", "text"}`` lines for a task's own items, or of
``{"item": {"question", "answer"[, "id"]}, "text"}`` lines for the
``custom`` task, becomes a conformbench replay that ``score`` reads like a
run's (same report, ledger, gates).

Every file is one condition: ``unconstrained``, or ``prompt_only[S]`` with
``--contract S`` (the answer was asked for as JSON under S; nothing is known
of how it was decoded, so no grammar arm is claimed). Optional line keys:
``finish_reason`` (``stop``, ``length`` or ``loop``: a cut answer counts as truncated),
``completion_tokens``, and ``prompt`` (the prompt as sent, one user
message). Without ``prompt`` the generation records the task's own prompt,
and the model record says the prompts were rebuilt."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from conformbench._version import __version__
from conformbench.errors import UsageError
from conformbench.files import file_sha256, jsonl_lines, read_text_file, write_files
from conformbench.importers.writing import file_created, write_replay
from conformbench.jsontypes import number_error
from conformbench.records.base import INT_BOUND
from conformbench.records.items import Condition, Item
from conformbench.records.prompt import Message, Prompt
from conformbench.records.replay import GenerationRecord, ItemRecord, ModelRecord, ReplayHeader
from conformbench.records.replay_file import REPLAY_NAME
from conformbench.records.spec import DecodingSpec, ModelSpec, RunSpec, TaskSpec
from conformbench.registry import did_you_mean
from conformbench.tasks.base import Task, tasks
from conformbench.tasks.contract_task import ContractTask

__all__ = ["ITEMS_NAME", "OutputLine", "OutputsSummary", "import_outputs", "read_outputs"]

_MAX_BYTES = 256 * 1024 * 1024
#: where the items of ``{"item", "text"}`` lines are written (the custom task's dataset)
ITEMS_NAME = "items.jsonl"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LineItem(_Strict):
    question: str = Field(min_length=1)
    answer: str = Field(min_length=1)
    id: str | None = Field(default=None, min_length=1)


class OutputLine(_Strict):
    item_id: str | None = Field(default=None, min_length=1)
    item: LineItem | None = None
    text: str
    finish_reason: Literal["stop", "length", "loop"] = "stop"
    completion_tokens: int = Field(default=0, ge=0, lt=INT_BOUND)  # what a replay holds (TokenCount)
    prompt: str | None = None


@dataclass(frozen=True)
class OutputsSummary:
    replay: Path
    task: str
    model: str
    condition: str
    items: int
    truncated: int
    #: the prompts were rebuilt by the task (the file carries none)
    prompts_rebuilt: int


def _parse(raw: str, path: Path, lineno: int) -> OutputLine:
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, RecursionError):
        raise UsageError(f"{path}:{lineno}: not a JSON line") from None
    except ValueError as exc:  # an integer past Python's int-string limit
        raise UsageError(f"{path}:{lineno}: {number_error(exc)}") from None
    try:
        line = OutputLine.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "line"
        raise UsageError(f"{path}:{lineno}: not an outputs line ({where}: {first['msg']}); "
                         'expected {"item_id": ..., "text": ...}') from None
    if (line.item_id is None) == (line.item is None):
        raise UsageError(f'{path}:{lineno}: give one of "item_id" (an item of the task) or '
                         '"item" (a {"question", "answer"} object, task custom)')
    return line


def read_outputs(path: Path) -> list[OutputLine]:
    """The lines of an outputs file (blank lines skipped), all of one form."""
    text = read_text_file(path, "outputs file", _MAX_BYTES)
    lines = [_parse(raw, path, n) for n, raw in enumerate(jsonl_lines(text), start=1) if raw.strip()]
    if not lines:
        raise UsageError(f"{path} holds no outputs")
    if len({line.item is None for line in lines}) > 1:
        raise UsageError(f'{path}: mixes "item_id" lines and "item" lines; use one form')
    return lines


def _condition(task: Task, contract: str | None) -> Condition:
    if contract is None:
        return Condition("unconstrained")
    if contract not in task.contracts:
        raise UsageError(f"task {task.name} has no contract {contract!r}"
                         f"{did_you_mean(contract, list(task.contracts))}; "
                         f"known: {', '.join(task.contracts)}")
    return Condition("prompt_only", contract)


def _custom_items(lines: list[OutputLine], out_dir: Path) -> Path:
    """Write the lines' items as the custom task's dataset (ids given or q1, q2, ...)."""
    rows = []
    for number, line in enumerate(lines, start=1):
        assert line.item is not None
        rows.append({"question": line.item.question, "answer": line.item.answer,
                     "id": line.item.id or f"q{number}"})
    path = out_dir / ITEMS_NAME
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
    write_files({path: "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)})  # whole or not at all
    return path.resolve()


def _task_spec(task: str, lines: list[OutputLine], out_dir: Path, contract: str | None,
               dataset: Path | None) -> TaskSpec:
    if not issubclass(tasks.get(task), ContractTask):  # an unknown name fails here, with did-you-mean
        raise UsageError(f"task {task} is not run through the decoding arms; outputs can be "
                         "imported for gsm8k, bfcl-simple, custom or a plugin ContractTask")
    by_item = lines[0].item is not None
    if by_item and task != "custom":
        raise UsageError(f'"item" lines carry their own question and answer: they are for task '
                         f'custom, not {task} (use "item_id" lines for its items)')
    if by_item and dataset is not None:
        raise UsageError('"item" lines carry their own items; drop --dataset')
    if by_item:
        dataset = _custom_items(lines, out_dir)
    arm = "unconstrained" if contract is None else f"prompt_only[{contract}]"
    return TaskSpec(name=task, arms=[arm], engines=[],
                    dataset=None if dataset is None else str(dataset))


def _items(task: Task, lines: list[OutputLine], path: Path) -> list[Item]:
    known = {item.id: item for item in task.items()}
    if lines[0].item is not None:
        return list(known.values())
    out: list[Item] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, start=1):
        item_id = line.item_id or ""
        if item_id in seen:
            raise UsageError(f"{path}: item {item_id!r} appears twice (line {number} repeats it)")
        if item_id not in known:
            raise UsageError(f"{path}: task {task.name} has no item {item_id!r}"
                             f"{did_you_mean(item_id, list(known))}")
        seen.add(item_id)
        out.append(known[item_id])
    return out


def import_outputs(source: Path, task_name: str, out_dir: Path, *, contract: str | None = None,
                   model: str | None = None, dataset: Path | None = None) -> OutputsSummary:
    """Write ``out_dir/replay.jsonl`` (and, for ``item`` lines, the items as
    ``out_dir/items.jsonl``) from an outputs file."""
    lines = read_outputs(source)
    if (out_dir / REPLAY_NAME).exists():
        raise UsageError(f"{out_dir / REPLAY_NAME} already exists; import into an empty directory")
    task_spec = _task_spec(task_name, lines, out_dir, contract, dataset)
    label = model or source.stem
    spec = RunSpec(models=[ModelSpec(label=label, backend="imported")], tasks=[task_spec],
                   decoding=DecodingSpec())
    task = tasks.get(task_name)(spec.task_options(task_spec))
    condition = _condition(task, contract)
    items = _items(task, lines, source)
    generations = [_generation(task, label, item, line, condition) for item, line in zip(items, lines)]
    digest = file_sha256(source)
    rebuilt = sum(line.prompt is None for line in lines)
    header = ReplayHeader(run_id=f"outputs-{digest[:24]}", created=file_created(source),
                          conformbench_version=__version__, spec=spec.replay_spec())
    record = ModelRecord(label=label, backend="imported", metadata={
        "imported_from": "outputs", "source_file": source.name, "source_sha256": digest,
        "prompts": "as sent (from the file)" if rebuilt == 0 else
                   f"{rebuilt} of {len(lines)} rebuilt by conformbench (the file carries none)"})
    path = write_replay(out_dir, header, [record, *(ItemRecord(task=task.name, item=i) for i in items),
                                          *generations])
    return OutputsSummary(replay=path, task=task.name, model=label, condition=condition.key,
                          items=len(items), truncated=sum(g.finish_reason == "length" for g in generations),
                          prompts_rebuilt=rebuilt)


def _generation(task: Task, model: str, item: Item, line: OutputLine, condition: Condition) -> GenerationRecord:
    prompt = task.prompt(item, condition) if line.prompt is None else Prompt((Message("user", line.prompt),))
    return GenerationRecord(task=task.name, model=model, item_id=item.id, condition=condition,
                            prompt=prompt, text=line.text, finish_reason=line.finish_reason,
                            completion_tokens=line.completion_tokens)
