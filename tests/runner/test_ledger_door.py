"""The ledger's one door (``runner/ledger/run_folder.py``): ``open_run``
holds the run folder's lock and the replay open for as long as the ledger
is, and lets both go however the run ends; ``reproduction`` answers what
``reproduce`` reruns."""

from __future__ import annotations

from pathlib import Path

import pytest
import runfakes

from conformbench.errors import UsageError
from conformbench.records.replay_file import read_replay
from conformbench.runner.ledger import ReproduceChoices, open_run, reproduction
from conformbench.runner.run import build_plans, execute
from conformbench.runner.spec import parse_spec


def test_an_open_ledger_holds_the_folder_and_lets_it_go_when_the_run_fails(tmp_path: Path) -> None:
    spec = parse_spec(runfakes.fake_spec(tmp_path, n=2))
    plans = build_plans(spec)
    with pytest.raises(RuntimeError, match="the run failed"), open_run(spec, plans, force=False) as ledger:
        with pytest.raises(UsageError, match="in use by another run"):
            open_run(spec, plans, force=False)
        assert ledger.done == {}
        raise RuntimeError("the run failed")
    summary = execute(spec)  # the lock was released: the run resumes the replay the ledger began
    assert summary.generated == summary.total > 0


def test_reproduction_cuts_each_task_to_n_items(tmp_path: Path) -> None:
    execute(parse_spec(runfakes.fake_spec(tmp_path / "first", n=4)))
    replay = tmp_path / "first" / "replay.jsonl"
    spec, notes = reproduction(replay, tmp_path / "again", True, ReproduceChoices(), n=2)
    recorded = read_replay(replay).header.spec
    assert [t.n for t in spec.tasks] == [2] * len(recorded.tasks) and notes == []
    assert spec.out == tmp_path / "again" and spec.quiet
