"""No write through a planted link under --out, and no resume read through
one (issue #59, case 2): a run folder copied between machines
(docs/scale-out.md) may hold links, and none of them may make conformbench
write, create or resume a file outside --out. Every writer opens through
``nofollow`` (``files.write_files``, ``ReplayWriter``, the journals)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
import runfakes

from conformbench.audits.probe.journal import JOURNAL_NAME as PROBE_JOURNAL
from conformbench.audits.probe.journal import ProbeJournal
from conformbench.errors import UsageError
from conformbench.files import read_text_file, write_files
from conformbench.nofollow import open_out
from conformbench.runner.run import execute
from conformbench.runner.spec import parse_spec
from conformbench.serving.journal import CostJournal


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _run(out: Path) -> None:
    execute(parse_spec(runfakes.fake_spec(out, arms=["prompt_only"])))


def _one_line(exc: pytest.ExceptionInfo[UsageError], *needles: str) -> None:
    assert "\n" not in str(exc.value)
    for needle in needles:
        assert needle in str(exc.value), str(exc.value)


def test_a_replay_linked_outside_out_is_neither_resumed_nor_changed(tmp_path: Path) -> None:
    """The issue's case: OUT/replay.jsonl a link to a replay outside --out
    with a torn tail; the rerun truncated the tail and appended through the
    link. Now it is refused, and the outside file is byte for byte as it was."""
    _run(tmp_path / "first")
    outside = tmp_path / "elsewhere" / "replay.jsonl"
    outside.parent.mkdir()
    data = (tmp_path / "first" / "replay.jsonl").read_bytes()
    lines = data.split(b"\n")
    outside.write_bytes(b"\n".join(lines[:-3]) + b"\n" + lines[-3][:20])  # two records short, a torn tail
    before = _digest(outside)
    out = tmp_path / "out"
    out.mkdir()
    (out / "replay.jsonl").symlink_to(outside)
    with pytest.raises(UsageError) as exc:
        _run(out)
    _one_line(exc, "is a link")
    assert _digest(outside) == before
    assert sorted(p.name for p in out.iterdir()) == [".replay.jsonl.lock", "replay.jsonl"]  # nothing else written


def test_a_dangling_replay_link_creates_nothing(tmp_path: Path) -> None:
    out, target = tmp_path / "out", tmp_path / "elsewhere" / "made.jsonl"
    out.mkdir()
    target.parent.mkdir()
    (out / "replay.jsonl").symlink_to(target)
    with pytest.raises(UsageError) as exc:
        _run(out)
    _one_line(exc, "is a link")
    assert not target.exists()


def test_a_dangling_requests_journal_link_creates_nothing(tmp_path: Path) -> None:
    """The issue's case: a dangling link at OUT/requests.jsonl made `engines
    cost` create the file it points to, outside --out."""
    out, target = tmp_path / "out", tmp_path / "elsewhere" / "created.jsonl"
    out.mkdir()
    target.parent.mkdir()
    (out / "requests.jsonl").symlink_to(target)
    with pytest.raises(UsageError) as exc:
        CostJournal(out, {"settings": 1})
    _one_line(exc, "is a link")
    assert not target.exists()


def test_a_requests_journal_linked_to_a_real_journal_is_not_resumed(tmp_path: Path) -> None:
    """A variant: the link points at a journal of the same settings, which
    would have been read back and appended to."""
    CostJournal(tmp_path / "a", {"settings": 1}).close()
    before = _digest(tmp_path / "a" / "requests.jsonl")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "requests.jsonl").symlink_to(tmp_path / "a" / "requests.jsonl")
    with pytest.raises(UsageError) as exc:
        CostJournal(tmp_path / "b", {"settings": 1})
    _one_line(exc, "is a link")
    assert _digest(tmp_path / "a" / "requests.jsonl") == before


def test_a_dangling_probe_journal_link_creates_nothing(tmp_path: Path) -> None:
    target = tmp_path / "created.jsonl"
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / PROBE_JOURNAL).symlink_to(target)
    with pytest.raises(UsageError):
        ProbeJournal(tmp_path / "out", {"model": "m"})
    assert not target.exists()


def test_a_report_written_over_a_link_replaces_the_link(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me", encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.md").symlink_to(victim)
    write_files({out / "report.md": "new"}, root=out)
    assert victim.read_text(encoding="utf-8") == "keep me"
    assert not (out / "report.md").is_symlink() and (out / "report.md").read_text(encoding="utf-8") == "new"
    assert [p.name for p in out.iterdir()] == ["report.md"]  # no temporary file left


def test_a_sub_folder_linked_out_of_out_is_refused(tmp_path: Path) -> None:
    """A variant the issue does not name: a link in the path under --out
    (a sub-folder), not at the file's own name."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    (out / "data").symlink_to(elsewhere)
    with pytest.raises(UsageError) as exc:
        write_files({out / "data" / "a.parquet": b"x"}, root=out)
    _one_line(exc, "is a link")
    with pytest.raises(UsageError):
        open_out(out / "data" / "b.jsonl", "append", root=out)
    assert list(elsewhere.iterdir()) == []


def test_a_fifo_at_a_journals_name_is_refused_not_waited_on(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "requests.jsonl")
    with pytest.raises(UsageError) as exc:
        open_out(tmp_path / "requests.jsonl", "append")
    _one_line(exc, "not a regular file")


def test_a_file_read_to_resume_is_not_read_through_a_link(tmp_path: Path) -> None:
    (tmp_path / "real.jsonl").write_text("{}\n", encoding="utf-8")
    (tmp_path / "link.jsonl").symlink_to(tmp_path / "real.jsonl")
    assert read_text_file(tmp_path / "link.jsonl") == "{}\n"  # a file the user names: followed
    with pytest.raises(UsageError) as exc:
        read_text_file(tmp_path / "link.jsonl", "journal", links=False)
    _one_line(exc, "is a link")
