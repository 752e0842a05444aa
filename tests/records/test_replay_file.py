"""Replay files: append, read back, tolerate an unterminated last line, and
reject damage anywhere else."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformbench.errors import UsageError
from conformbench.records.items import Condition, Item
from conformbench.records.prompt import Message, Prompt
from conformbench.records.replay import GenerationRecord, ItemRecord, ReplayHeader
from conformbench.records.replay_file import ReplayWriter, read_replay


def _header() -> ReplayHeader:
    return ReplayHeader(run_id="r1", created="2026-01-01T00:00:00+00:00",
                        conformbench_version="0", spec={"models": [{"label": "m"}], "tasks": [{"name": "t"}]})


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
    header = json.loads(_header().model_dump_json())
    path.write_text(json.dumps({**header, "format": "otherbench.replay/1"}) + "\n")
    with pytest.raises(UsageError, match="x.jsonl: replay format 'otherbench.replay/1' is not supported"):
        read_replay(path)
    path.write_text(json.dumps({**header, "version": 4}) + "\n")
    with pytest.raises(UsageError, match=r"x.jsonl: replay format 4 is newer than this conformbench reads \(3\); "
                                         "upgrade"):
        read_replay(path)
    path.write_bytes(b"\xff\xfe\n")
    with pytest.raises(UsageError, match="not a JSON line"):
        read_replay(path)
    with pytest.raises(UsageError, match="cannot read"):
        read_replay(tmp_path / "missing.jsonl")


def _error(i: int) -> GenerationRecord:
    return _gen(i, text="").model_copy(update={"finish_reason": "error", "error": "HTTP 503"})


def test_a_later_try_supersedes_an_error_but_never_an_answer(tmp_path: Path) -> None:
    """Append-only resume: the file keeps every try; readers get one record
    per key (the last answer, or the last error if every try failed), in the
    order keys first appeared."""
    path = tmp_path / "replay.jsonl"
    with ReplayWriter.create(path, _header()) as w:
        for record in (_error(0), _gen(1, "a1"), _error(2), _gen(0, "a0"), _error(1), _error(2)):
            w.write(record)
    raw = [line for line in path.read_text(encoding="utf-8").splitlines() if '"generation"' in line]
    assert len(raw) == 6  # nothing rewritten
    got = read_replay(path)
    assert [(g.item_id, g.finish_reason, g.text) for g in got.generations] == [
        ("q0", "stop", "a0"), ("q1", "stop", "a1"), ("q2", "error", "")]
    assert len(got.superseded) == 3
    assert {g.item_id for g in got.superseded} == {"q0", "q1", "q2"}


def test_the_writer_survives_text_that_is_not_unicode(tmp_path: Path) -> None:
    """A lone surrogate (from a server's JSON escape) cannot be encoded as
    UTF-8: the record is written with U+FFFD instead, and says so."""
    path = tmp_path / "replay.jsonl"
    bad = _gen(0, text="half \ud800 a pair").model_copy(update={"free_text": "\udfff"})
    with ReplayWriter.create(path, _header()) as w:
        w.write(bad)
        w.write(_gen(1))
    got = read_replay(path)
    first, second = got.generations
    assert first.text == "half \ufffd a pair" and first.free_text == "\ufffd"
    assert first.error is not None and "not valid Unicode" in first.error
    assert second.text == "ok" and second.error is None
