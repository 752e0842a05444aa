"""``--shard K/N``: parts generate disjoint items into their own files, the
plain run folds them in (records already there win) and generates the rest;
a part never starts on another spec's replay or beside a run in progress."""

from __future__ import annotations

from pathlib import Path

import pytest
import runfakes

from conformbench.errors import UsageError
from conformbench.records.replay_file import read_replay
from conformbench.records.spec import RunSpec
from conformbench.runner.ledger import Shard, locked, shard_files
from conformbench.runner.run import execute
from conformbench.runner.spec import parse_spec


def _spec(out: Path, n: int = 8) -> RunSpec:
    return parse_spec(runfakes.fake_spec(out, n=n))


def _texts(path: Path) -> dict[tuple[str, str, str, str], str]:
    return {g.key: g.text for g in read_replay(path).generations}


@pytest.mark.parametrize("text, expected", [("1/2", Shard(1, 2)), (" 3 / 3 ", Shard(3, 3))])
def test_a_part_is_written_k_of_n(text: str, expected: Shard) -> None:
    assert Shard.parse(text) == expected


@pytest.mark.parametrize("text", ["0/2", "3/2", "2", "a/b", "1/0", "-1/2"])
def test_a_bad_part_is_refused(text: str) -> None:
    with pytest.raises(UsageError, match="--shard"):
        Shard.parse(text)


def test_parts_split_the_items_disjointly_and_keep_an_item_whole() -> None:
    ids = [f"item-{i}" for i in range(400)]
    owners = [[s for s in range(1, 4) if Shard(s, 3).owns("t", i)] for i in ids]
    assert all(len(o) == 1 for o in owners)
    sizes = [sum(o == [s] for o in owners) for s in range(1, 4)]
    assert min(sizes) > 100  # roughly even: 400 items, 3 parts


def test_two_parts_then_the_plain_run_equal_one_plain_run(tmp_path: Path) -> None:
    whole = tmp_path / "whole"
    execute(_spec(whole))
    parts = tmp_path / "parts"
    first = execute(_spec(parts), shard=Shard(1, 2))
    second = execute(_spec(parts), shard=Shard(2, 2))
    assert first.generated + second.generated == 8 * 4
    assert first.total == first.generated and second.total == second.generated
    assert not (parts / "replay.jsonl").exists()
    assert len(shard_files(parts)) == 2
    runfakes.CALLS.clear()
    merged = execute(_spec(parts))
    assert merged.folded == 32 and merged.generated == 0 and not runfakes.CALLS.requests
    assert shard_files(parts) == []
    assert _texts(parts / "replay.jsonl") == _texts(whole / "replay.jsonl")
    items = [r.item.id for r in read_replay(parts / "replay.jsonl").items]
    assert sorted(items) == sorted(f"q{i}" for i in range(8)) and len(set(items)) == 8


def test_a_part_skips_what_the_main_replay_holds_and_the_fold_keeps_the_main_record(
        tmp_path: Path) -> None:
    execute(_spec(tmp_path, n=4))
    before = _texts(tmp_path / "replay.jsonl")
    runfakes.CALLS.clear()
    part = execute(_spec(tmp_path, n=4), shard=Shard(1, 2))
    assert part.generated == 0 and not runfakes.CALLS.requests
    execute(_spec(tmp_path, n=4))
    assert _texts(tmp_path / "replay.jsonl") == before


def test_a_part_resumes_its_own_file(tmp_path: Path) -> None:
    execute(_spec(tmp_path), shard=Shard(2, 2))
    runfakes.CALLS.clear()
    again = execute(_spec(tmp_path), shard=Shard(2, 2))
    assert again.generated == 0 and again.skipped == again.total and not runfakes.CALLS.requests


def test_a_part_of_another_spec_is_refused_and_the_main_replay_is_untouched(
        tmp_path: Path) -> None:
    execute(parse_spec(runfakes.fake_spec(tmp_path, n=2, arms=["constrained"])), shard=Shard(1, 2))
    with pytest.raises(UsageError, match="part of a different spec"):
        execute(_spec(tmp_path, n=2))
    assert len(shard_files(tmp_path)) == 1


def test_a_part_refuses_a_main_replay_of_another_spec(tmp_path: Path) -> None:
    execute(parse_spec(runfakes.fake_spec(tmp_path, n=2, arms=["constrained"])))
    with pytest.raises(UsageError, match="run it without --shard first"):
        execute(_spec(tmp_path, n=2), shard=Shard(1, 2))


def test_a_part_still_being_written_is_not_folded(tmp_path: Path) -> None:
    execute(_spec(tmp_path, n=2), shard=Shard(1, 2))
    part = Shard(1, 2).path(tmp_path)
    with locked(part, "a test"), pytest.raises(UsageError, match="in use by a sharded run"):
        execute(_spec(tmp_path, n=2))
    assert part.exists()


def test_a_part_does_not_start_beside_a_plain_run(tmp_path: Path) -> None:
    execute(_spec(tmp_path, n=2))
    with locked(tmp_path / "replay.jsonl", "a test"), \
            pytest.raises(UsageError, match="in use by an unsharded run"):
        execute(_spec(tmp_path, n=2), shard=Shard(1, 2))


def _count_reads(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Every read_replay call the runner makes, counted per file name."""
    import conformbench.records.replay_file as replay_file
    import conformbench.runner.ledger.run_folder as run_folder
    import conformbench.runner.ledger.shards as shards

    counts: dict[str, int] = {}

    def counting(path: Path, *, links: bool = True) -> replay_file.ReplayContents:
        counts[path.name] = counts.get(path.name, 0) + 1
        return replay_file.read_replay(path, links=links)

    monkeypatch.setattr(run_folder, "read_replay", counting)
    monkeypatch.setattr(shards, "read_replay", counting)
    return counts


def test_a_run_reads_its_replay_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Resuming reads OUT/replay.jsonl once; folding parts reads each part
    once and resumes from the folded contents without reading them back."""
    out = tmp_path / "run"
    execute(_spec(out, n=4))
    counts = _count_reads(monkeypatch)
    execute(_spec(out, n=4))  # a finished run, resumed: nothing to do
    assert counts == {"replay.jsonl": 1}

    monkeypatch.undo()
    parts = tmp_path / "parts"
    execute(_spec(parts, n=8), shard=Shard(1, 2))
    counts = _count_reads(monkeypatch)
    merged = execute(_spec(parts, n=8))  # folds part 1 into a new replay, then generates the rest
    assert merged.folded > 0 and merged.generated == 8 * 4 - merged.folded
    assert counts == {"replay.shard-1-of-2.jsonl": 1}  # the folded replay is not read back
    assert len(read_replay(parts / "replay.jsonl").generations) == 8 * 4


def test_parts_of_the_main_replays_spec_are_folded_before_it_grows(tmp_path: Path) -> None:
    """Parts that finished an interrupted run (the main replay's spec), then
    a plain run with a larger spec: the parts are folded in first, so the
    grown run generates only what the growth adds, and no part is left
    behind (a part of the old spec would then block every later run)."""
    execute(_spec(tmp_path, n=4))
    main = tmp_path / "replay.jsonl"
    lines = main.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [line for line in lines if '"item_id":"q3"' not in line and '"id":"q3"' not in line]
    assert len(kept) < len(lines)
    main.write_text("".join(kept), encoding="utf-8")  # the run stopped before q3
    done = execute(_spec(tmp_path, n=4), shard=Shard(1, 2)).generated
    done += execute(_spec(tmp_path, n=4), shard=Shard(2, 2)).generated
    assert done == 4  # q3's four arms
    grown = execute(_spec(tmp_path, n=6))
    assert grown.folded == 4 and grown.generated == 2 * 4  # q4 and q5 only
    assert shard_files(tmp_path) == []
    assert execute(_spec(tmp_path, n=6)).generated == 0
