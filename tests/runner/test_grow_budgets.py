"""Raising a finished run's token budgets: only the answers the old budget
may have cut are generated again (scripted backend; the real-model check is
test_grow_budgets_model.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import runfakes

from conformbench.errors import UsageError
from conformbench.records.replay_file import read_replay
from conformbench.runner.run import execute
from conformbench.runner.spec import parse_spec


@pytest.fixture(autouse=True)
def _clear_calls() -> None:
    runfakes.CALLS.clear()


def _spec(out: Path, decoding: dict[str, Any] | None = None, **task: Any) -> Any:
    data = runfakes.fake_spec(out, **task)
    data["decoding"] = decoding or {"max_tokens": 32}
    return parse_spec(data)


def _sent() -> list[tuple[str, int, int]]:
    return [(json.loads(r.prompt.messages[-1].content)["arm"], json.loads(r.prompt.messages[-1].content)["i"],
             r.settings.max_tokens) for r in runfakes.CALLS.requests]


def test_a_larger_answer_budget_redoes_only_the_cut_answers(tmp_path: Path) -> None:
    execute(_spec(tmp_path, n=6))
    before = read_replay(tmp_path / "replay.jsonl")
    cut = [g.key for g in before.generations if g.finish_reason == "length"]
    assert len(cut) == 1  # the scripted model's constrained q4 hits its budget
    runfakes.CALLS.clear()
    summary = execute(_spec(tmp_path, n=6, json_tokens=64))
    assert summary.redone == 1 and summary.generated == 1
    assert _sent() == [("constrained", 4, 64)]
    after = read_replay(tmp_path / "replay.jsonl")
    assert [g.key for g in after.superseded] == cut
    assert after.header.spec.tasks[0].json_tokens == 64
    assert "json 32 -> 64" in after.header.grown[-1]
    assert [g.key for g in after.generations] == [g.key for g in before.generations]


def test_a_larger_free_budget_redoes_two_turn_answers_whose_free_turn_may_be_cut(
        tmp_path: Path) -> None:
    # reason_then_constrain alone has its own free turn: its end is in the answer's step, so a
    # step that stopped before the old budget is kept; one recorded without it (a replay made
    # before steps' costs were) may have been cut: redone
    execute(_spec(tmp_path, n=3, arms=["reason_then_constrain"]))
    replay = tmp_path / "replay.jsonl"
    steps = {g.item_id: g.step for g in read_replay(replay).generations}
    assert all(s is not None and s.finish_reason == "stop" and s.completion_tokens < 32 for s in steps.values())
    lines = replay.read_text(encoding="utf-8").splitlines(keepends=True)
    older = [json.dumps({k: v for k, v in json.loads(line).items() if k != "step"}, separators=(",", ":")) + "\n"
             if '"item_id":"q1"' in line else line for line in lines]
    replay.write_text("".join(older), encoding="utf-8")
    runfakes.CALLS.clear()
    summary = execute(_spec(tmp_path, n=3, arms=["reason_then_constrain"], free_tokens=64))
    assert summary.redone == 1
    # the free turn first, then its packaging turn
    assert sorted((arm, i, budget) for arm, i, budget in _sent()) == [("package", 1, 32), ("unconstrained", 1, 64)]
    redone = {g.item_id: g.step for g in read_replay(replay).generations}
    assert redone["q1"] is not None and redone["q0"] == steps["q0"] and redone["q2"] == steps["q2"]


def test_a_free_turn_reused_from_a_finished_answer_is_kept(tmp_path: Path) -> None:
    execute(_spec(tmp_path, n=3, arms=["unconstrained", "reason_then_constrain"]))
    runfakes.CALLS.clear()
    summary = execute(_spec(tmp_path, n=3, arms=["unconstrained", "reason_then_constrain"],
                            free_tokens=64))
    assert summary.redone == 0 and not runfakes.CALLS.requests


def test_more_items_and_larger_budgets_grow_together(tmp_path: Path) -> None:
    execute(_spec(tmp_path, n=5))
    runfakes.CALLS.clear()
    summary = execute(_spec(tmp_path, n=6, max_tokens=48))
    assert summary.grown == {"fake-qa": (5, 6)} and summary.redone == 1
    assert sorted({i for _, i, _ in _sent()}) == [4, 5]
    assert {budget for _, _, budget in _sent()} == {48}


@pytest.mark.parametrize("smaller", [{"json_tokens": 16}, {"max_tokens": 16}])
def test_a_smaller_budget_is_a_different_run(tmp_path: Path, smaller: dict[str, int]) -> None:
    execute(_spec(tmp_path, n=2))
    with pytest.raises(UsageError, match="different spec"):
        execute(_spec(tmp_path, n=2, **smaller))


def test_the_run_wide_budget_counts_like_a_task_budget(tmp_path: Path) -> None:
    execute(_spec(tmp_path, n=6))
    runfakes.CALLS.clear()
    summary = execute(_spec(tmp_path, n=6, decoding={"max_tokens": 40}))
    assert summary.redone == 1 and _sent() == [("constrained", 4, 40)]
