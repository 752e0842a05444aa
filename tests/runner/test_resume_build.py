"""A run resumed or grown on another build says so in its header: greedy
texts are bit-identical only on one build, so a replay made in parts records
which part came from which build (scripted backend)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import runfakes

from conformbench.backends.runinfo import build_facts
from conformbench.records.replay_file import read_replay
from conformbench.runner.ledger import BUILD_NOTE, current_build
from conformbench.runner.run import execute
from conformbench.runner.spec import parse_spec

ELSEWHERE = {"cpu_features": ["avx2"], "llama_cpp": {"system_info": "CPU : AVX2 = 1 |"}}


@pytest.fixture(autouse=True)
def _clear_calls() -> None:
    runfakes.CALLS.clear()


def _spec(out: Path, n: int) -> Any:
    return parse_spec(runfakes.fake_spec(out, n=n))


def _made_elsewhere(replay: Path) -> None:
    """Rewrite the replay's header as if its run had been made on another build."""
    lines = replay.read_text(encoding="utf-8").splitlines(keepends=True)
    header = json.loads(lines[0])
    header["build"] = ELSEWHERE
    replay.write_text(json.dumps(header) + "\n" + "".join(lines[1:]), encoding="utf-8")


def _build_notes(replay: Path) -> list[dict[str, Any]]:
    notes = read_replay(replay).header.grown
    return [json.loads(n.partition(BUILD_NOTE)[2]) for n in notes if BUILD_NOTE in n]


def test_growing_on_another_build_notes_this_build_once(tmp_path: Path) -> None:
    replay = tmp_path / "replay.jsonl"
    execute(_spec(tmp_path, n=2))
    _made_elsewhere(replay)
    execute(_spec(tmp_path, n=3))
    here = build_facts(_spec(tmp_path, n=3).models)
    header = read_replay(replay).header
    assert header.build == ELSEWHERE  # the first part's build is kept
    assert _build_notes(replay) == [here] and current_build(header) == here
    assert "n 2 -> 3" in header.grown[0]
    execute(_spec(tmp_path, n=4))  # grown again on this build: nothing more to say
    assert _build_notes(replay) == [here]


def test_resuming_the_same_spec_on_another_build_notes_it(tmp_path: Path) -> None:
    replay = tmp_path / "replay.jsonl"
    execute(_spec(tmp_path, n=2))
    _made_elsewhere(replay)
    execute(_spec(tmp_path, n=2))
    assert _build_notes(replay) == [build_facts(_spec(tmp_path, n=2).models)]


def test_a_run_resumed_on_its_own_build_gets_no_note(tmp_path: Path) -> None:
    execute(_spec(tmp_path, n=2))
    execute(_spec(tmp_path, n=3))
    execute(_spec(tmp_path, n=3))
    assert _build_notes(tmp_path / "replay.jsonl") == []
    assert len(read_replay(tmp_path / "replay.jsonl").header.grown) == 1
