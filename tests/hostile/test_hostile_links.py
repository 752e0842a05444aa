"""Files under --out opened without following links (issue #49, defect 8):
a link planted at the replay's lock name is refused, its target never
created; growing a replay writes a fresh temporary file, never through a
link at the old ``replay.jsonl.growing`` name."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformbench.errors import UsageError
from conformbench.runner.ledger import locked


def test_a_link_at_the_lock_is_refused_and_its_target_not_created(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    target = tmp_path / "outside" / "created"
    target.parent.mkdir()
    (out / ".replay.jsonl.lock").symlink_to(target)
    with pytest.raises(UsageError) as exc, locked(out / "replay.jsonl", "another run"):
        pass
    assert "\n" not in str(exc.value)
    assert not target.exists()


def test_the_lock_without_a_link_is_taken(tmp_path: Path) -> None:
    with locked(tmp_path / "replay.jsonl", "another run"):
        assert (tmp_path / ".replay.jsonl.lock").is_file()


def test_growing_never_writes_through_a_link_at_the_old_growing_name(tmp_path: Path) -> None:
    from conformbench.files import shipped_data
    from conformbench.records.replay_file import read_replay
    from conformbench.runner.ledger.header import rewrite_header

    lines = shipped_data("replays/concodeeval-beam-greedy.jsonl").read_bytes().split(b"\n")[:5]
    replay = tmp_path / "replay.jsonl"
    replay.write_bytes(b"\n".join(lines) + b"\n")
    victim = tmp_path / "outside.txt"
    victim.write_text("keep me", encoding="utf-8")
    (tmp_path / "replay.jsonl.growing").symlink_to(victim)
    contents = read_replay(replay)
    rewrite_header(contents, contents.header)
    assert victim.read_text(encoding="utf-8") == "keep me"
    assert read_replay(replay).header == contents.header
