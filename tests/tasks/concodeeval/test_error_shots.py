"""Few-shot examples picked from a zero-shot run's errors (--shots-from).

The zero-shot replays here are written with chosen answers (the oracle's
valid sample, a one-keyword violation, or prose), so the errors are known;
the last test reads the shipped replay of a real SmolLM2 run."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from conformbench.errors import UsageError
from conformbench.records.items import TaskOptions
from conformbench.records.replay import GenerationRecord, ItemRecord, ReplayHeader
from conformbench.records.replay_file import ReplayWriter
from conformbench.schemas.case import SchemaCase, load_dataset
from conformbench.tasks.concodeeval.base import ConCodeEvalTask
from conformbench.tasks.concodeeval.error_profile import read_profile
from conformbench.tasks.concodeeval.generation import GenerationTask
from conformbench.tasks.concodeeval.validation import ValidationTask
from conformbench.tasks.gsm8k import Gsm8kTask

SHIPPED = Path(__file__).resolve().parents[3] / "src/conformbench/data/replays/concodeeval-generation.jsonl"
CELL = {"schema_formats": ["json"], "output_formats": ["json"]}


def _spec(task: str, dataset: Path, arms: list[str]) -> dict[str, object]:
    return {"models": [{"label": "m", "backend": "fake"}],
            "tasks": [{"name": task, "dataset": str(dataset), "shots": [0], "arms": arms, **CELL}]}


def write_replay(path: Path, task: ConCodeEvalTask, spec: dict[str, object],
                 answers: dict[str, str]) -> Path:
    """A zero-shot replay of ``task`` whose answer to item id X is answers[X]."""
    header = ReplayHeader(run_id="t", created="2026-01-01T00:00:00+00:00",
                          conformbench_version="test", spec=spec)
    with ReplayWriter.create(path, header) as writer:
        items = task.items()
        for item in items:
            writer.write(ItemRecord(task=task.name, item=item))
        for item in items:
            for cond in task.conditions():
                writer.write(GenerationRecord(task=task.name, model="m", item_id=item.id, condition=cond,
                                              prompt=task.prompt(item, cond), text=answers[item.id]))
    return path


@pytest.fixture(scope="module")
def cases(concodeeval_dataset: Path) -> dict[str, SchemaCase]:
    return {c.id: c for c in load_dataset(concodeeval_dataset)}


def _keywords(case: SchemaCase) -> set[str]:
    return {i.keyword for i in case.invalid_instances}


def _generation_replay(tmp_path: Path, dataset: Path, cases: dict[str, SchemaCase],
                       fail: dict[str, str]) -> Path:
    """Schema id -> the keyword its answer violates (others answer validly)."""
    task = GenerationTask(TaskOptions(dataset=str(dataset), axes={"schema_formats": ("json",),
                                                                  "output_formats": ("json",)}))
    answers = {}
    for sid, case in cases.items():
        value = case.valid_instance
        if sid in fail:
            value = next(i.instance for i in case.invalid_instances if i.keyword == fail[sid])
        answers[f"cc_{sid}"] = json.dumps(value)
    return write_replay(tmp_path / "zero.jsonl", task, _spec("generation", dataset, ["prompt_only"]), answers)


def _few(dataset: Path, shots_from: Path | None, task: type[ConCodeEvalTask] = GenerationTask,
         **kw: object) -> ConCodeEvalTask:
    return task(TaskOptions(dataset=str(dataset), axes={"shots": (3,), "schema_formats": ("json",),
                                                        "output_formats": ("json",)},
                            shots_from=None if shots_from is None else str(shots_from),
                            **kw))  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def static_ids(concodeeval_dataset: Path) -> dict[str, list[str]]:
    """Schema id -> the ids of its static shots."""
    return {str(i.input["schema_id"]): [str(s) for s in i.meta["shot_ids"]]  # type: ignore[union-attr]
            for i in _few(concodeeval_dataset, None).items()}


@pytest.fixture(scope="module")
def kw(cases: dict[str, SchemaCase], static_ids: dict[str, list[str]]) -> str:
    """A keyword several schemas have and that the static shots never show."""
    shown = {k for ids in static_ids.values() for sid in ids for k in _keywords(cases[sid])}
    counts = Counter(k for c in cases.values() for k in _keywords(c))
    return next(k for k, n in counts.most_common() if n >= 3 and k not in shown)


def test_shots_show_the_most_frequent_failing_keyword(tmp_path: Path, concodeeval_dataset: Path,
                                                      cases: dict[str, SchemaCase], kw: str,
                                                      static_ids: dict[str, list[str]]) -> None:
    fail = {sid: kw for sid, c in cases.items() if kw in _keywords(c)}
    replay = _generation_replay(tmp_path, concodeeval_dataset, cases, fail)
    profile = read_profile(replay, "generation")
    assert (profile.failures, profile.keywords) == (len(fail), ((kw, len(fail)),))
    items = _few(concodeeval_dataset, replay).items()
    for item in items:
        sid = str(item.input["schema_id"])
        ids = item.meta["shot_ids"]
        assert isinstance(ids, list) and len(ids) == 3
        # never the item's own schema, by id or by content
        assert sid not in ids and all(cases[str(s)].schema != cases[sid].schema for s in ids)
        assert kw in _keywords(cases[str(ids[0])]), (sid, ids)
        reasons = item.meta["shot_reasons"]
        assert isinstance(reasons, list) and str(reasons[0]).startswith(f"shows {kw}: ")
        assert item.meta["shot_selection"] == "zero-shot errors"
        assert item.meta["shots_from_sha256"] == profile.sha256
        stored = item.input["shots"]
        assert isinstance(stored, list) and [s["reason"] for s in stored] == reasons  # type: ignore[index]
    # the static choice never shows it: the errors changed the shots
    assert all(kw not in _keywords(cases[s]) for ids in static_ids.values() for s in ids)


def test_an_item_s_own_failure_comes_first(tmp_path: Path, concodeeval_dataset: Path,
                                           cases: dict[str, SchemaCase], kw: str) -> None:
    fail = {sid: kw for sid, c in cases.items() if kw in _keywords(c)}
    # one schema fails on a keyword of its own that few others have
    rare = Counter(k for c in cases.values() for k in _keywords(c))
    sid, own = next((s, k) for s, c in cases.items() if s not in fail
                    for k in sorted(_keywords(c)) if 2 <= rare[k] and k != kw)
    fail[sid] = own
    replay = _generation_replay(tmp_path, concodeeval_dataset, cases, fail)
    items = {str(i.input["schema_id"]): i for i in _few(concodeeval_dataset, replay).items()}
    mine = items[sid]
    first = str(mine.meta["shot_ids"][0])  # type: ignore[index]
    assert own in _keywords(cases[first]) and first != sid
    assert str(mine.meta["shot_reasons"][0]).startswith(  # type: ignore[index]
        f"shows {own}: {own} failed on this schema zero-shot (1 of 1 samples)")
    other = next(i for s, i in items.items() if s not in fail)
    assert str(other.meta["shot_reasons"][0]).startswith(f"shows {kw}: ")  # type: ignore[index]


def test_no_errors_falls_back_to_the_static_choice(tmp_path: Path, concodeeval_dataset: Path,
                                                   cases: dict[str, SchemaCase]) -> None:
    replay = _generation_replay(tmp_path, concodeeval_dataset, cases, {})
    assert read_profile(replay, "generation").failures == 0
    items = _few(concodeeval_dataset, replay).items()
    static = _few(concodeeval_dataset, None).items()
    for item, plain in zip(items, static, strict=True):
        assert item.input["shots"] == plain.input["shots"]
        assert str(item.meta["shot_selection"]).startswith("static: no zero-shot errors in ")
        assert "shot_selection" not in plain.meta  # the plain static items are unchanged


def test_selection_is_deterministic(tmp_path: Path, concodeeval_dataset: Path,
                                    cases: dict[str, SchemaCase], kw: str) -> None:
    replay = _generation_replay(tmp_path, concodeeval_dataset, cases,
                                {s: kw for s, c in cases.items() if kw in _keywords(c)})
    assert _few(concodeeval_dataset, replay).items() == _few(concodeeval_dataset, replay).items()


def test_validation_no_shot_violates_the_most_missed_keyword(tmp_path: Path, concodeeval_dataset: Path) -> None:
    zero = ValidationTask(TaskOptions(dataset=str(concodeeval_dataset),
                                      axes={"schema_formats": ("json",), "output_formats": ("json",)}))
    # a model that always says yes: every 'no' item is missed
    answers = {item.id: "yes" for item in zero.items()}
    replay = write_replay(tmp_path / "val.jsonl", zero, _spec("validation", concodeeval_dataset,
                                                               ["unconstrained"]), answers)
    profile = read_profile(replay, "validation")
    assert profile.failures == len(answers) // 2 and profile.keywords
    top = {k for k, _ in profile.top_keywords(5)}
    items = _few(concodeeval_dataset, replay, ValidationTask).items()
    # both items of a schema share its shots; its own misses are its 'no' item's keywords
    missed = {str(i.input["schema_id"]): i.meta["violated_keywords"] for i in zero.items() if i.target == "no"}
    for item in items:
        shots = item.input["shots"]
        assert isinstance(shots, list) and [s["answer"] for s in shots] == ["yes", "no"]  # type: ignore[index]
        no = shots[1]
        assert isinstance(no, dict) and str(item.input["schema_id"]) not in (shots[0]["schema_id"], no["schema_id"])  # type: ignore[index]
        own = missed[str(item.input["schema_id"])]
        assert no["keyword"] in top | set(own), item.id  # type: ignore[arg-type]
        assert str(no["reason"]).startswith(f"violates {no['keyword']}: ")


def test_shots_from_is_checked(tmp_path: Path, concodeeval_dataset: Path, cases: dict[str, SchemaCase]) -> None:
    replay = _generation_replay(tmp_path, concodeeval_dataset, cases, {})
    with pytest.raises(UsageError, match="no few-shot setting"):
        GenerationTask(TaskOptions(dataset=str(concodeeval_dataset), shots_from=str(replay)))
    with pytest.raises(UsageError, match="no 'validation' task"):
        _few(concodeeval_dataset, replay, ValidationTask).items()
    with pytest.raises(UsageError, match="cannot read"):
        _few(concodeeval_dataset, tmp_path / "missing.jsonl").items()
    with pytest.raises(UsageError, match="takes no few-shot examples"):
        Gsm8kTask(TaskOptions(shots_from=str(replay)))


@pytest.mark.long
def test_the_errors_of_a_real_zero_shot_run(tmp_path: Path) -> None:
    """The shipped SmolLM2 replay (zero-shot generation, 100 schemas of seed
    0): the first 40 schemas get shots showing its most frequent failures."""
    profile = read_profile(SHIPPED, "generation")
    assert profile.generations == 1500 and profile.failures > 0
    top = {k for k, _ in profile.top_keywords(5)}
    opts = {"n": 40, "seed": 0, "axes": {"shots": (3,), "output_formats": ("json",)}}
    items = GenerationTask(TaskOptions(shots_from=str(SHIPPED), **opts)).items()  # type: ignore[arg-type]
    static = GenerationTask(TaskOptions(**opts)).items()  # type: ignore[arg-type]
    for item in items:
        ids = item.meta["shot_ids"]
        assert isinstance(ids, list) and len(ids) == 3 and item.input["schema_id"] not in ids
        for reason in item.meta["shot_reasons"]:  # type: ignore[union-attr]
            kw = str(reason).removeprefix("shows ").split(":")[0]
            own = profile.errors_of(str(item.input["schema_id"]), item.input["schema"])
            assert kw in top or (own is not None and kw in dict(own.keywords)) or \
                str(reason).startswith("static fill: "), reason
    distinct = len({tuple(i.meta["shot_ids"]) for i in items})  # type: ignore[arg-type]
    assert distinct > len({tuple(i.meta["shot_ids"]) for i in static})  # type: ignore[arg-type]
