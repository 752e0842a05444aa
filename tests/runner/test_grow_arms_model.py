"""Adding an arm to a real run (embedded SmolLM2 through llama.cpp, from the
command line): the recorded arm's records stay byte for byte, only the new
arm's answers are generated, and a third run generates nothing.

One llama.cpp thread and two gsm8k items, as test_grow_budgets_model.py
(two threads spin-wait and slow down many-fold on a busy 2-core machine)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformbench.cli.main import main
from conformbench.records.replay_file import read_replay

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def _run(out: Path, *arms: str) -> None:
    args = ["run", "--task", "gsm8k", "-n", "2", "--threads", "1", "--no-canary", "--quiet", "--out", str(out)]
    for arm in arms:
        args += ["--arm", arm]
    assert main(args) == 0


def _generations(out: Path) -> list[bytes]:
    lines = (out / "replay.jsonl").read_bytes().splitlines()
    return [line for line in lines if json.loads(line).get("kind") == "generation"]


@pytest.mark.long
def test_an_added_arm_generates_only_its_answers(tmp_path: Path) -> None:
    _run(tmp_path, "constrained[answer]")
    first = _generations(tmp_path)
    assert len(first) == 2
    _run(tmp_path, "constrained[answer]", "prompt_only[answer]")
    grown = _generations(tmp_path)
    assert grown[:2] == first  # the recorded arm's records, byte for byte
    added = [json.loads(line) for line in grown[2:]]
    assert len(added) == 2 and {g["condition"]["arm"] for g in added} == {"prompt_only"}
    replay = read_replay(tmp_path / "replay.jsonl")
    assert replay.header.spec.tasks[0].arms == ["constrained[answer]", "prompt_only[answer]"]
    assert any("arms added: prompt_only[answer]" in note for note in replay.header.grown)
    _run(tmp_path, "constrained[answer]", "prompt_only[answer]")
    assert _generations(tmp_path) == grown  # nothing left to do
