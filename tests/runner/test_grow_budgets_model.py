"""Raising the budget of a real run (embedded SmolLM2 through llama.cpp):
the answers the small budget cut are generated again and, greedy, continue
the text they were cut at; nothing that ended on its own is redone.

Sized to stay well inside its limit beside other work: one llama.cpp thread
(two spin-wait and slow down many-fold on a busy 2-core machine; this test
once ran past 600 s that way), two items, and a second budget just large
enough to continue the cut answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conformbench.records.replay_file import read_replay
from conformbench.runner.run import execute
from conformbench.runner.spec import parse_spec

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def _spec(out: Path, json_tokens: int) -> Any:
    return parse_spec({
        "models": [{"label": "smol", "backend": "llamacpp", "threads": 1, "n_ctx": 2048}],
        "tasks": [{"name": "gsm8k", "n": 2, "arms": ["prompt_only", "constrained"],
                   "json_tokens": json_tokens}],
        "decoding": {"temperature": 0.0, "seed": 0},
        "out": str(out), "quiet": True, "canary": False,
    })


@pytest.mark.long
def test_a_larger_budget_continues_exactly_the_cut_answers(tmp_path: Path) -> None:
    execute(_spec(tmp_path, 12))
    before = {g.key: g for g in read_replay(tmp_path / "replay.jsonl").generations}
    cut = {k for k, g in before.items() if g.finish_reason == "length"}
    assert cut, "a 12-token answer budget cuts some answers"
    summary = execute(_spec(tmp_path, 48))
    assert summary.redone == len(cut) and summary.generated == len(cut)
    after = {g.key: g for g in read_replay(tmp_path / "replay.jsonl").generations}
    assert after.keys() == before.keys()
    for key, old in before.items():
        new = after[key]
        if key in cut:
            assert new.text.startswith(old.text) and len(new.text) > len(old.text), key
        else:
            assert new == old
