"""A run in which no request succeeded exits 2 with one line (not 0, which CI
reads as a pass, nor 1, which means a gate tripped); its error records stay
in the replay and its model record's counters are written at the end."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformbench.cli.main import main
from conformbench.records.replay_file import read_replay


@pytest.mark.long
def test_every_request_failing_exits_2(tmp_path: Path, unused_port: int,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    code = main(["run", "--backend", "openai", "--base-url", f"http://127.0.0.1:{unused_port}/v1",
                 "--model", "m", "--task", "gsm8k", "-n", "1", "--arm", "unconstrained",
                 "--timeout", "1", "--out", str(out)])
    assert code == 2
    err = capsys.readouterr().err
    assert "conformbench: error: every one of the 1 generations of this run failed" in err
    assert "Traceback" not in err
    contents = read_replay(out / "replay.jsonl")
    assert [g.finish_reason for g in contents.generations] == ["error"]
    assert contents.models and contents.models[-1].final
