"""conformbench.testing.walk_policy walks an arm's policy over one item as
a run does: each turn's kind, grammar and prompt, the scorer's verdicts,
the round limits, and where it stops; its prompts are the ones a run on the
scripted backend recorded."""

from __future__ import annotations

from pathlib import Path

import pytest
import runfakes

from conformbench.arms import feedback_request
from conformbench.errors import UsageError
from conformbench.records.items import TaskOptions
from conformbench.records.replay_file import read_replay
from conformbench.runner.run import execute
from conformbench.runner.spec import parse_spec
from conformbench.tasks.base import Task, tasks
from conformbench.testing import walk_policy

BAD = "The answer is 18."
GOOD = '{"answer": 18}'


def _gsm8k(*arms: str) -> Task:
    return tasks.create("gsm8k", TaskOptions(n=2, arms=arms, engines=("llguidance",)))


def test_one_answer_arms_take_one_turn_of_their_kind() -> None:
    task = _gsm8k("unconstrained", "prompt_only[answer]", "constrained[answer]")
    for key, kind, grammar in (("unconstrained", "free", False), ("prompt_only[answer]", "ask", False),
                               ("constrained[answer]@llguidance", "constrained", True)):
        walk = walk_policy(task, key, [GOOD, GOOD])
        assert [(t.plan.kind, t.plan.grammar) for t in walk.turns] == [(kind, grammar)] and walk.stopped, key
    # the grammar is the only difference between prompt_only and constrained
    ask = walk_policy(task, "prompt_only[answer]", [GOOD]).turns[0].plan
    constrained = walk_policy(task, "constrained[answer]@llguidance", [GOOD]).turns[0].plan
    assert ask.prompt == constrained.prompt and ask.stop == constrained.stop


def test_reason_then_constrain_steps_then_packages() -> None:
    walk = walk_policy(_gsm8k("reason_then_constrain"), "reason_then_constrain[answer]@llguidance",
                       ["6 times 3 is 18.", GOOD, "never asked"])
    step, answer = walk.turns
    assert (step.plan.kind, step.plan.answer, step.plan.budget) == ("free", False, "free")
    assert step.verdict.valid is None  # a step is judged as the free text it is
    assert (answer.plan.kind, answer.plan.grammar, answer.plan.budget) == ("package", True, "packaging")
    assert "6 times 3 is 18." in [m.content for m in answer.plan.prompt.messages] and walk.stopped


def test_repair_re_asks_in_its_words_up_to_the_round_limit() -> None:
    task = _gsm8k("repair[answer]")
    walk = walk_policy(task, "repair[answer]", [BAD, BAD, BAD, GOOD])
    assert [t.plan.kind for t in walk.turns] == ["ask", "feedback", "feedback"] and walk.stopped
    first, second, _ = walk.turns
    assert first.invalid and first.verdict.errors[0].keyword == "parse"
    assert second.plan.prompt.messages[-1].content == feedback_request(first.verdict)
    assert len(walk_policy(task, "repair[answer]", [BAD, BAD], max_rounds=2).turns) == 2
    # a valid answer ends it; answers running out leave the next turn asked for
    assert walk_policy(task, "repair[answer]", [BAD, GOOD]).stopped
    pending = walk_policy(task, "repair[answer]", [BAD])
    assert not pending.stopped and pending.next is not None and pending.next.kind == "feedback"


def test_fallback_turns_the_grammar_on_after_an_invalid_answer() -> None:
    walk = walk_policy(_gsm8k("fallback[answer]"), "fallback[answer]@llguidance", [BAD])
    assert walk.next is not None and (walk.next.kind, walk.next.grammar) == ("constrained", True)
    assert walk_policy(_gsm8k("fallback[answer]"), "fallback[answer]@llguidance", [GOOD]).stopped


def test_bad_conditions_and_items_are_one_clear_error() -> None:
    task = _gsm8k("repair[answer]")
    with pytest.raises(UsageError, match=r"no condition 'repair\[answr\]' \(did you mean 'repair\[answer\]'\?\)"):
        walk_policy(task, "repair[answr]", [BAD])
    with pytest.raises(UsageError, match="has 2 items; item 5 is not one of them"):
        walk_policy(task, "repair[answer]", [BAD], item=5)


def test_the_walk_asks_what_a_run_sent(tmp_path: Path) -> None:
    """The scripted model's answers to repair, walked again: every turn's
    prompt is the one the run recorded."""
    spec = runfakes.fake_spec(tmp_path, arms=["repair"])
    execute(parse_spec(spec))
    gens = [g for g in read_replay(tmp_path / "replay.jsonl").generations if g.item_id == "q1"]
    assert len(gens) == 2  # q1's first answer does not parse: one repair round
    task = tasks.create("fake-qa", TaskOptions(n=6, arms=("repair",)))
    walk = walk_policy(task, "repair[answer]", [g.text for g in gens], item=1)
    assert [t.plan.prompt.messages for t in walk.turns] == [g.prompt.messages for g in gens]
    assert walk.stopped
