"""Replay layout 3 (records.migrations): every axis of a condition
is a pair in ``axes``. A version 2 replay (the ConCodeEval tasks' axes in
fields of their own) reads into the same conditions, keys and scores; a
version 3 replay round-trips; a version 2 replay that a resumed run
appended version 3 lines to reads as one file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from conformbench.records.items import Condition
from conformbench.records.migrations import REPLAY_VERSION
from conformbench.records.replay import GenerationRecord
from conformbench.records.replay_file import ReplayWriter, read_replay
from conformbench.reports.rescore import score_replays
from conformbench.runner.shipped import shipped_replays

#: a shipped replay written in layout 2 (ConCodeEval generation, 60 answers)
V2 = shipped_replays()["concodeeval-beam-greedy"]


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _scored(path: Path) -> dict[str, Any]:
    report = json.loads(score_replays([path]).model_dump_json())
    assert len(report.pop("replays")) == 1
    return dict(report)


def test_a_version_2_replay_reads_its_conditions_into_axes() -> None:
    raw = _lines(V2)
    assert raw[0]["version"] == 2 and REPLAY_VERSION == 3
    old = [line["condition"] for line in raw if line["kind"] == "generation"]
    assert old and all("schema_format" in c and "axes" not in c for c in old)
    contents = read_replay(V2)
    assert contents.header.version == REPLAY_VERSION
    assert len(contents.generations) == len(old)
    for was, rec in zip(old, contents.generations, strict=True):
        cell = {"schema_format": was["schema_format"], "output_format": was["output_format"], "shots": was["shots"]}
        assert rec.condition == Condition.of(was["arm"], was["contract"], was["engine"], cell)
        arm = rec.condition.arm_key
        assert rec.condition.key == f"{was['schema_format']}->{was['output_format']}/{was['shots']}shot/{arm}"


def _rewritten(source: Path, path: Path) -> None:
    """``source`` written anew by this conformbench (layout 3)."""
    contents = read_replay(source)
    with ReplayWriter.create(path, contents.header) as writer:
        for record in [*contents.models, *contents.items, *contents.generations]:
            writer.write(record)


@pytest.mark.long  # two rescores of 60 answers: about 6 s
def test_a_version_3_replay_round_trips_and_rescores_the_same(tmp_path: Path) -> None:
    path = tmp_path / "replay.jsonl"
    _rewritten(V2, path)
    raw = _lines(path)
    assert raw[0]["version"] == 3
    stored = [line["condition"] for line in raw if line["kind"] == "generation"]
    assert stored and all(set(c) == {"arm", "contract", "engine", "axes"} for c in stored)
    assert [c["axes"][0][0] for c in stored] == ["schema_format"] * len(stored)
    again, before = read_replay(path), read_replay(V2)
    assert [g.condition for g in again.generations] == [g.condition for g in before.generations]
    assert _scored(path) == _scored(V2)


def test_a_resumed_version_2_replay_reads_as_one_file(tmp_path: Path) -> None:
    """A resume appends (the header is not rewritten): the file keeps its
    version 2 header and first lines, then has lines of layout 3."""
    path = tmp_path / "replay.jsonl"
    shutil.copyfile(V2, path)
    whole = read_replay(V2)
    lines = path.read_bytes().split(b"\n")
    kept = [line for line in lines if line and b'"kind":"generation"' not in line]
    first = [line for line in lines if b'"kind":"generation"' in line][:20]
    path.write_bytes(b"\n".join([*kept, *first]) + b"\n")
    with ReplayWriter.resume(path, path.stat().st_size) as writer:
        for rec in whole.generations[20:]:
            writer.write(rec)
    raw = _lines(path)
    conditions = [line["condition"] for line in raw if line["kind"] == "generation"]
    assert raw[0]["version"] == 2 and "schema_format" in conditions[0] and "axes" in conditions[-1]
    assert "schema_format" not in conditions[-1]
    resumed = read_replay(path)
    assert [(g.key, g.condition) for g in resumed.generations] == [(g.key, g.condition) for g in whole.generations]
    assert all(isinstance(g, GenerationRecord) for g in resumed.generations)
