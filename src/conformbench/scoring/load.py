"""From replay files to scored tables: rebuild each task from the header's
spec and score every generation. An excluded generation (the engine could
not compile the item's schema) or a missing one (an unfinished run) leaves
its item out of that one condition only, listed as an exclusion; paired
comparisons then run over the items both conditions have."""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformbench.arms.base import arms
from conformbench.errors import UsageError
from conformbench.files import read_bytes_file
from conformbench.records.items import Condition, Item
from conformbench.records.replay import GenerationRecord
from conformbench.records.replay_file import ReplayContents
from conformbench.records.results import Exclusion, ReplaySource
from conformbench.records.spec import RunSpec
from conformbench.scoring.table import ScoredGeneration, ScoredTable
from conformbench.tasks.base import Task, tasks

__all__ = ["CheckedReplay", "LoadedRun", "LoadedTable", "load_replays"]

Key = tuple[str, str, str, str]
#: a replay's items by task and id (``runner.ledger.ReplayItems``)
ReplayItems = Mapping[str, Mapping[str, Item]]
#: a replay read, with its items checked against every replay merged with it
CheckedReplay = tuple[ReplayContents, ReplayItems]


@dataclass
class LoadedTable:
    table: ScoredTable
    exclusions: list[Exclusion]
    correctness_label: str
    task_info: dict[str, Any]
    #: the tool the answers were imported from (``conformbench import``), None for a live run:
    #: no rerun can give an imported answer a larger budget
    imported_from: str | None = None
    #: what ``score`` says when a replay was made with another version of the task
    version_note: str | None = None


@dataclass
class LoadedRun:
    sources: list[ReplaySource] = field(default_factory=list)
    tables: list[LoadedTable] = field(default_factory=list)
    #: formats checked (True) or annotations (False) in every table
    format_assertion: bool = False


@dataclass
class _Group:
    task: Task
    items: dict[str, Item] = field(default_factory=dict)
    gens: list[GenerationRecord] = field(default_factory=list)
    imported_from: str | None = None
    version_note: str | None = None


def _version_note(contents: ReplayContents, task: Task) -> str | None:
    """A line when the replay was made with another version of ``task``
    than this conformbench's (None where the header recorded none)."""
    made = contents.header.task_versions.get(task.name)
    if made is None or made == task.version:
        return None
    return (f"{contents.path} was made with version {made} of task {task.name!r}, this conformbench has "
            f"version {task.version}: its items, prompts or checker changed since, so the numbers may differ "
            "from a run made now")


def _source(path: Path, contents: ReplayContents) -> ReplaySource:
    digest = hashlib.sha256(read_bytes_file(path, "replay file")).hexdigest()
    h = contents.header
    return ReplaySource(
        path=str(path), sha256=digest, run_id=h.run_id, created=h.created,
        conformbench_version=h.conformbench_version, spec=h.spec.as_recorded(), hardware=h.hardware,
        models=[m.model_dump(mode="json") for m in contents.models],
        generations=len(contents.generations), truncated_tail=contents.truncated_tail,
        superseded=len(contents.superseded),
        replaced_answers=sum(g.finish_reason != "error" for g in contents.superseded),
        units=len({g.unit_key for g in contents.generations}),
        shared=sum(g.shared is not None for g in contents.generations),
        build=h.build,
        servers=_by_server(contents),
    )


def _by_server(contents: ReplayContents) -> dict[str, int]:
    """Generations each server of a pool made (``GenerationRecord.server``), by model label and server."""
    made: dict[str, int] = {}
    for gen in contents.generations:
        if gen.server is not None and gen.finish_reason != "error":
            key = f"{gen.model} @ {gen.server}"
            made[key] = made.get(key, 0) + 1
    return made


def _spec_of(contents: ReplayContents) -> RunSpec:
    """The run spec of the header (checked when the replay was read)."""
    return contents.header.spec.run_spec()


def _format_assertion(specs: list[tuple[Path, RunSpec]], given: bool | None) -> bool:
    """The format mode of the scoring: ``given`` (--format-assertion or
    --no-format-assertion), else the one the replays' run specs agree on."""
    if given is not None:
        return given
    modes = {spec.format_assertion for _, spec in specs}
    if len(modes) > 1:
        asserted = ", ".join(str(p) for p, spec in specs if spec.format_assertion)
        raise UsageError(f"the replays were run with different format modes (formats asserted in "
                         f"{asserted}, annotations in the others); choose one with "
                         "--format-assertion or --no-format-assertion")
    return modes.pop() if modes else False


def _with_params(spec: RunSpec, params: dict[str, Any]) -> RunSpec:
    """``spec`` with the scoring params (``score --match`` ...) over those of
    every task that takes them (a task that takes none keeps its own)."""
    if not params:
        return spec
    chosen, taken = [], False
    for task in spec.tasks:
        known = _task_class(task.name).option_names()
        takes = {k: v for k, v in params.items() if k in known}
        taken = taken or bool(takes)
        chosen.append(task.model_copy(update={"params": {**task.params, **takes}}) if takes else task)
    if not taken:  # an override equal to the recorded value is taken, and changes nothing
        raise UsageError(f"no task of the replay takes {', '.join(params)} (custom does)")
    return spec.model_copy(update={"tasks": chosen})


def _task_class(name: str) -> type[Task]:
    try:
        return tasks.get(name)
    except UsageError as exc:
        if name in tasks.names():
            raise
        raise UsageError(f"{exc}; a task from your own module: conformbench score REPLAY "
                         "--task-module FILE.py (the module is imported, so name only one you trust)") from None


def _shown(text: str, limit: int = 80) -> str:
    """An id from a file, for a one-line message: repr (no control
    characters), cut to ``limit`` characters."""
    shown = ascii(text)
    return shown if len(shown) <= limit else shown[:limit] + "..."


def _check_bounds(gen: GenerationRecord, spec: RunSpec, path: Path) -> None:
    """UsageError unless the record's sample and round lie within the
    header's spec (``samples``, ``max_rounds``) and a round after the first
    belongs to an arm that takes rounds: a record is checked against its
    header, never taken as an answer the run could not have given."""
    where = f"{path}: generation {gen.task}/{_shown(gen.item_id)} ({_shown(gen.condition.key)})"
    samples = spec.decoding.samples
    if gen.sample >= samples:
        raise UsageError(f"{where} is sample {gen.sample}, but the header's spec draws {samples} "
                         f"sample{'s' if samples != 1 else ''} per item")
    if gen.round == 0:
        return
    if gen.condition.arm in arms and not arms.get(gen.condition.arm).rounds:
        raise UsageError(f"{where} is round {gen.round + 1}, but arm {gen.condition.arm!r} answers once")
    if gen.round >= spec.decoding.rounds:
        raise UsageError(f"{where} is round {gen.round + 1}, but the header's spec allows at most "
                         f"{spec.decoding.rounds} rounds")


def _group(contents: ReplayContents, items: ReplayItems, spec: RunSpec, groups: dict[tuple[str, str], _Group],
           seen: dict[Key, Path]) -> None:
    built = {t.name: _task_class(t.name)(spec.task_options(t)) for t in spec.tasks}
    imported = {m.label: m.metadata.get("imported_from") for m in contents.models}
    dropped = _tools_dropped(contents)
    for gen in contents.generations:
        if gen.key in seen:
            raise UsageError(f"generation {'/'.join(gen.key)} is in both {seen[gen.key]} "
                             f"and {contents.path}")
        seen[gen.key] = contents.path
        if gen.task not in built:
            raise UsageError(f"{contents.path}: task {gen.task!r} is not in the header spec")
        if gen.item_id not in items.get(gen.task, {}):
            raise UsageError(f"{contents.path}: no item record for {gen.task}/{gen.item_id}")
        _check_bounds(gen, spec, contents.path)
        group = groups.setdefault((gen.task, gen.model), _Group(built[gen.task]))
        group.imported_from = group.imported_from or imported.get(gen.model)
        group.version_note = group.version_note or _version_note(contents, group.task)
        group.items.setdefault(gen.item_id, items[gen.task][gen.item_id])
        if gen.condition.mode is not None and gen.model in dropped and gen.finish_reason != "excluded":
            gen = gen.model_copy(update={"finish_reason": "excluded", "excluded": dropped[gen.model]})
        group.gens.append(gen)


def _tools_dropped(contents: ReplayContents) -> dict[str, str]:
    """The models whose server's chat template dropped the tools (the run's
    check, ``runner/served_tools.py``) and were not accepted so
    (``--allow-dropped-tools``): their tools answers are left out, why said."""
    out: dict[str, str] = {}
    for model in contents.models:
        tools = model.canary.get("tools")
        reach = tools.get("reach") if isinstance(tools, dict) else None
        if isinstance(reach, dict) and reach.get("dropped") is True and reach.get("allowed") is not True:
            out[model.label] = (f"the server's chat template dropped the tools (the prompt was "
                                f"{reach.get('with_tools')} tokens with and without them): the model never "
                                "saw the functions")
    return out


def _exclusions(group: _Group, conditions: list[Condition]) -> list[Exclusion]:
    out: list[Exclusion] = []
    have: dict[str, set[str]] = defaultdict(set)
    for gen in group.gens:
        have[gen.item_id].add(gen.condition.key)
        if gen.finish_reason == "excluded" and gen.sample == 0:  # a later sample's is the same
            out.append(Exclusion(item_id=gen.item_id, condition=gen.condition.key,
                                 reason=gen.excluded or "excluded by the backend"))
    for item_id in group.items:
        for cond in conditions:
            if cond.key not in have[item_id]:
                out.append(Exclusion(item_id=item_id, condition=cond.key,
                                     reason="incomplete: the run has no generation for it yet"))
    return out


def _scored(group: _Group, gen: GenerationRecord, earlier: tuple[ScoredGeneration, ...] = ()) -> ScoredGeneration:
    item = group.items[gen.item_id]
    truncated = gen.finish_reason in ("length", "loop")
    score = group.task.score(item, gen.condition, gen.answer, truncated)
    return ScoredGeneration(
        item=item, condition=gen.condition, score=score, finish_reason=gen.finish_reason,
        text=gen.text, prompt_tokens=gen.prompt_tokens,
        completion_tokens=gen.completion_tokens, seconds=gen.seconds,
        unenforced=tuple(gen.unenforced), attention=gen.attention, sample=gen.sample,
        round=gen.round, earlier=earlier, free_text=gen.free_text, step=gen.step, shared=gen.shared is not None,
        thinking=gen.thought, think_cut=gen.think_cut, mask_toll=gen.mask_toll,
    )


def _answers(gens: list[GenerationRecord]) -> list[list[GenerationRecord]]:
    """Each unit's answers (a multi-round arm's rounds), in first-written
    order; rounds must run 1, 2, ... without a gap (a later round is only
    asked after the one before it)."""
    units: dict[Key, list[GenerationRecord]] = {}
    for gen in gens:
        units.setdefault(gen.unit_key, []).append(gen)
    out = [sorted(rounds, key=lambda g: g.round) for rounds in units.values()]
    for rounds in out:
        for expected, gen in enumerate(rounds):
            if gen.round != expected:
                raise UsageError(f"generation {'/'.join(gen.key)} is round {gen.round + 1}, but the "
                                 f"replays have no round {expected + 1} of its item and condition")
    return out


def _score(group: _Group, task_name: str, model: str) -> LoadedTable:
    conditions = list(dict.fromkeys(gen.condition for gen in group.gens))
    exclusions = _exclusions(group, conditions)
    rows: list[ScoredGeneration] = []
    extra: list[ScoredGeneration] = []  # samples 1, 2...: the sampling section's alone
    for rounds in _answers(group.gens):
        last = rounds[-1]
        if last.finish_reason == "excluded":
            continue
        # a unit's answer is its last round; the earlier ones are kept for the rounds' metrics
        earlier = tuple(_scored(group, gen) for gen in rounds[:-1] if gen.finish_reason != "excluded")
        (extra if last.sample else rows).append(_scored(group, last, earlier))
    scored = {r.item_id for r in rows}
    kept = [i for i in group.items if i in scored]
    table = ScoredTable(task_name, model, tuple(kept), tuple(conditions), tuple(rows),
                        format_mode=group.task.options.format_mode, extra_samples=tuple(extra))
    # JSON round trip: describe() may hold tuples or paths
    info = json.loads(json.dumps(group.task.describe(), default=str))
    return LoadedTable(table, exclusions, group.task.correctness_label, info, group.imported_from,
                       group.version_note)


def load_replays(read: Sequence[CheckedReplay], format_assertion: bool | None = None,
                 task_params: dict[str, Any] | None = None) -> LoadedRun:
    """Score replays, each read with its items checked by the ledger
    (``runner.ledger.checked_replays``, through ``reports.rescore``): an
    item id means one item across them, so they merge here without a
    comparison. Generations of one (task, model) may be
    spread over several files, but none may appear in two files (within one
    file, read_replay keeps the latest try of each). ``format_assertion``:
    check ``format`` (True) or read it as an annotation (False); None: as
    the replays' run specs say (annotations unless a run asked otherwise).
    ``task_params``: scoring params over the replays' (the matcher: ``match``,
    ``normalize``, ``tolerance``), for every task that takes them."""
    if not read:
        raise UsageError("no replay files given")
    specs = [(contents.path, _with_params(_spec_of(contents), task_params or {})) for contents, _ in read]
    run = LoadedRun(format_assertion=_format_assertion(specs, format_assertion))
    groups: dict[tuple[str, str], _Group] = {}
    seen: dict[Key, Path] = {}
    for (contents, items), (path, spec) in zip(read, specs, strict=True):
        run.sources.append(_source(path, contents))
        _group(contents, items, spec.model_copy(update={"format_assertion": run.format_assertion}), groups, seen)
    for (task_name, model), group in groups.items():
        run.tables.append(_score(group, task_name, model))
    return run
