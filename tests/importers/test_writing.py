"""``write_replay`` (issue #28): an imported replay is whole or absent. An
import that fails half-way (a bad record found late, a full disk) leaves no
``replay.jsonl``, which a later ``score`` or import would take for a
finished one, and no temporary file; a replay that is there is never
replaced."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel

from conformbench.errors import UsageError
from conformbench.importers.writing import write_replay
from conformbench.records.replay import ModelRecord, ReplayHeader
from conformbench.records.replay_file import read_replay

HEADER = ReplayHeader(run_id="imported-test", created="2026-12-01T00:00:00+00:00", conformbench_version="0",
                      spec={"models": [{"label": "m"}], "tasks": [{"name": "t"}]})


def _records(fail_after: int | None = None) -> Iterator[BaseModel]:
    for n in range(5):
        if fail_after is not None and n == fail_after:
            raise UsageError("line 4 of the source is not a generation")
        yield ModelRecord(label=f"model-{n}", backend="imported", metadata={})


def test_an_import_that_fails_half_way_leaves_no_replay(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="line 4"):
        write_replay(tmp_path / "out", HEADER, _records(fail_after=3))
    assert list((tmp_path / "out").iterdir()) == []


def test_a_whole_import_reads_back(tmp_path: Path) -> None:
    path = write_replay(tmp_path / "out", HEADER, _records())
    assert [m.label for m in read_replay(path).models] == [f"model-{n}" for n in range(5)]
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["replay.jsonl"]


def test_a_replay_that_is_there_is_never_replaced(tmp_path: Path) -> None:
    path = write_replay(tmp_path / "out", HEADER, _records())
    before = path.read_bytes()
    with pytest.raises(UsageError, match="already exists"):
        write_replay(tmp_path / "out", HEADER, _records())
    assert path.read_bytes() == before
