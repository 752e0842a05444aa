"""Replay files: append, read back, tolerate an unterminated last line, and
reject damage anywhere else."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformbench.errors import UsageError
from conformbench.models.base import Message, Prompt
from conformbench.runner.records import GenerationRecord, ItemRecord, ReplayHeader
from conformbench.runner.replay import ReplayWriter, read_replay
from conformbench.tasks.base import Condition, Item


def _header() -> ReplayHeader:
    return ReplayHeader(run_id="r1", created="2026-01-01T00:00:00+00:00",
                        conformbench_version="0", spec={"x": 1})


def _gen(i: int, text: str = "ok") -> GenerationRecord:
    return GenerationRecord(task="t", model="m", item_id=f"q{i}",
                            condition=Condition("constrained", "answer", "llguidance"),
                            prompt=Prompt((Message("user", "hi\nthere"),)), text=text)


def _write(path: Path, n: int) -> None:
    with ReplayWriter.create(path, _header()) as w:
        w.write(ItemRecord(task="t", item=Item("q0", {"a": [1, 2]}, target=3)))
        for i in range(n):
            w.write(_gen(i, text=f'{{"answer": {i}}}\n'))


def test_round_trip_keeps_every_record(tmp_path: Path) -> None:
    path = tmp_path / "replay.jsonl"
    _write(path, 3)
    got = read_replay(path)
    assert got.header.run_id == "r1" and got.truncated_tail == 0
    assert got.items[0].item == Item("q0", {"a": [1, 2]}, target=3)
    assert [g.text for g in got.generations] == [f'{{"answer": {i}}}\n' for i in range(3)]
    assert got.generations[0].condition.key == "constrained[answer]@llguidance"
    assert got.good_size == path.stat().st_size
    with pytest.raises(FileExistsError):
        ReplayWriter.create(path, _header())


def test_unterminated_last_line_is_reported_and_cut_before_appending(tmp_path: Path) -> None:
    path = tmp_path / "replay.jsonl"
    _write(path, 3)
    data = path.read_bytes()
    path.write_bytes(data[:-25])  # cut mid-line
    got = read_replay(path)
    assert len(got.generations) == 2 and got.truncated_tail > 0
    with ReplayWriter.resume(path, got.good_size) as w:
        w.write(_gen(7))
    again = read_replay(path)
    assert [g.item_id for g in again.generations] == ["q0", "q1", "q7"]
    assert again.truncated_tail == 0


def test_damage_before_the_last_line_is_an_error_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "replay.jsonl"
    _write(path, 3)
    lines = path.read_bytes().split(b"\n")
    lines[2] = b'{"kind": "generation", "task": 1'
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(UsageError, match=r"replay.jsonl:3: not a JSON line"):
        read_replay(path)
    lines[2] = b'{"kind": "generation", "task": "t"}'
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(UsageError, match=r"replay.jsonl:3: not a replay record"):
        read_replay(path)


def test_not_a_replay_or_another_format(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"kind": "item", "task": "t", "item": {"id": "a", "input": {}}}\n')
    with pytest.raises(UsageError, match="no header line"):
        read_replay(path)
    path.write_text(_header().model_copy(update={"format": "conformbench.replay/2"})
                    .model_dump_json() + "\n")
    with pytest.raises(UsageError, match="replay format 'conformbench.replay/2' is not supported"):
        read_replay(path)
    path.write_bytes(b"\xff\xfe\n")
    with pytest.raises(UsageError, match="not a JSON line"):
        read_replay(path)
    with pytest.raises(UsageError, match="cannot read"):
        read_replay(tmp_path / "missing.jsonl")
