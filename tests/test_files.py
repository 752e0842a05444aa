"""files.py's writers (issue #28): ``atomic_path`` publishes a streamed file
only once it is whole, and both it and ``write_files`` give new files the
mode ``open(path, "w")`` would (0666 less the umask), not mkstemp's 0600."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from conformbench.files import atomic_path, write_files


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_failed_block_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "replay.jsonl"
    path.write_text("old\n")
    with pytest.raises(RuntimeError), atomic_path(path) as tmp:
        tmp.write_text("half of the new one")
        assert path.read_text() == "old\n"  # nothing is visible while it is written
        raise RuntimeError("the writer died")
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["replay.jsonl"]


def test_a_whole_block_replaces_or_creates(tmp_path: Path) -> None:
    path = tmp_path / "out.json"
    for text in ("first", "second"):
        with atomic_path(path) as tmp:
            tmp.write_text(text)
        assert path.read_text() == text
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_exclusive_never_replaces_a_file_that_appeared(tmp_path: Path) -> None:
    path = tmp_path / "replay.jsonl"
    with pytest.raises(FileExistsError), atomic_path(path, exclusive=True) as tmp:
        tmp.write_text("mine")
        path.write_text("someone else's")  # created while this one was being written
    assert path.read_text() == "someone else's"
    assert [p.name for p in tmp_path.iterdir()] == ["replay.jsonl"]
    fresh = tmp_path / "fresh.jsonl"
    with atomic_path(fresh, exclusive=True) as tmp:
        tmp.write_text("mine")
    assert fresh.read_text() == "mine" and len(list(tmp_path.iterdir())) == 2


def test_new_files_get_the_umask_mode(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        write_files({tmp_path / "report.md": "x"})
        with atomic_path(tmp_path / "replay.jsonl") as tmp:
            tmp.write_text("x")
        (tmp_path / "plain.txt").write_text("x")
    finally:
        os.umask(old)
    assert _mode(tmp_path / "report.md") == _mode(tmp_path / "replay.jsonl") == _mode(tmp_path / "plain.txt") == 0o644
