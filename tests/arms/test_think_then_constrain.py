"""think_then_constrain[S]: its one request (the thinking's budget plus the
answer's, the stop string, the grammar after it), the refusals before a
run starts, the split of the answer from the thinking, and on the embedded
model: one call per item, every answer after the stop string valid for S
under python-jsonschema or counted as cut, ``score`` reproducing the report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from conformbench.cli.main import main
from conformbench.errors import UsageError
from conformbench.records.generation import DecodingSettings, GenerationRequest, GenerationResult, TurnBudgets
from conformbench.records.items import TaskOptions
from conformbench.records.prompt import Prompt
from conformbench.records.replay import GenerationRecord
from conformbench.records.replay_file import read_replay
from conformbench.runner.mask_place import THINKING
from conformbench.runner.session import split_answer
from conformbench.runner.units import first_turn, plan_task
from conformbench.tasks.base import tasks
from conformbench.tasks.gsm8k import ANSWER_SCHEMA

ARM = "think_then_constrain[answer]"


def _plan(engine: str = "llguidance", think_stop: str = "</think>"):
    task = tasks.get("gsm8k")(TaskOptions(n=1, arms=(ARM,), engines=(engine,)))
    return plan_task(task, DecodingSettings(), TurnBudgets(free=100, json=30, packaging=40, think=70),
                     think_stop=think_stop)


def test_one_request_spends_the_thinking_and_the_answer_budget():
    plan = _plan(think_stop="<end>")
    request = first_turn(plan, plan.units("m")[0])
    assert request.settings.max_tokens == 70 + 30
    assert request.settings.loop_stop is False  # the thinking's matcher cuts a loop itself
    assert request.constraint is not None and request.constraint.engine == "llguidance"
    assert request.constraint.thinking is not None
    assert (request.constraint.thinking.stop, request.constraint.thinking.tokens) == ("<end>", 70)
    prompt = request.prompt.messages[-1].content
    assert "write <end> and then" in prompt and '"answer"' in prompt


def test_an_engine_without_free_text_is_refused_before_the_run():
    with pytest.raises(UsageError, match="think_then_constrain needs"):
        _plan("xgrammar")
    assert _plan("server").units("m")  # the server's engine: the openai backend's dialect decides


@pytest.mark.parametrize("dialect", [None, "json_schema", "json_object_schema"])
def test_the_openai_backend_refuses_a_schema_only_dialect_in_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], dialect: str | None):
    """Before any request (the port is closed): only vLLM's own fields carry a grammar."""
    given = ["--dialect", dialect] if dialect else []
    code = main(["run", "--backend", "openai", "--base-url", "http://127.0.0.1:9/v1", "--model", "x", *given,
                 "--task", "gsm8k", "-n", "1", "--arm", ARM, "--out", str(tmp_path / "out"), "--quiet"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "openai backend" in err, err
    assert "--dialect structured_outputs" in err and "llama.cpp's servers" in err


def test_the_answer_is_what_follows_the_stop_string():
    request = first_turn(_plan(), _plan().units("m")[0])
    result = GenerationResult(text='2+2 is 4</think>{"answer": 4}', finish_reason="stop", think_cut="budget")
    split = split_answer(request, result)
    assert isinstance(split, GenerationResult)
    assert (split.thinking, split.text, split.think_cut) == ("2+2 is 4", '{"answer": 4}', "budget")
    ended = split_answer(request, GenerationResult(text="2+2 is", finish_reason="error"))
    assert isinstance(ended, GenerationResult) and (ended.thinking, ended.text) == ("2+2 is", "")
    plain = GenerationRequest(prompt=Prompt(messages=()))
    assert split_answer(plain, result) is result  # no thinking asked: untouched


@pytest.mark.long
@pytest.mark.slow
@pytest.mark.timeout(2400)
def test_think_then_constrain_on_the_embedded_model(tmp_path: Path) -> None:
    out = tmp_path / "out"
    code = main(["run", "--task", "gsm8k", "-n", "2", "--think-tokens", "48", "--json-tokens", "24",
                 "--free-tokens", "48", "--packaging-tokens", "24", "--arm", ARM,
                 "--arm", "reason_then_constrain[answer]", "--arm", "constrained[answer]",
                 "--threads", "1", "--out", str(out), "--quiet"])
    assert code == 0
    replay = read_replay(out / "replay.jsonl")
    thinks = [g for g in replay.generations if g.condition.arm == "think_then_constrain"]
    assert len(thinks) == 2 and all(g.free_text is None and g.thinking is not None for g in thinks)
    validator = Draft202012Validator(ANSWER_SCHEMA)
    for gen in thinks:
        assert "</think>" in gen.engine_input and gen.finish_reason != "error"
        if gen.finish_reason == "stop":  # every answer the call finished is valid for S
            assert validator.is_valid(json.loads(gen.text)), gen.text
        else:  # or it is cut at the answer's budget (or looped) and counted as such
            assert gen.finish_reason in ("length", "loop")
        # with 48 thinking tokens a 135M model's reasoning rarely closes itself: then the
        # decoder wrote the stop string, and the thinking is 48 tokens or a loop cut short
        assert gen.think_cut in (None, "budget", "loop")
        _check_answer_part(gen)
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    result = report["results"][0]
    sections = {s["name"]: s["data"] for s in result["sections"]}
    cost = {a["key"]: a for a in sections["cost"]["arms"]}
    assert cost["think_then_constrain[answer]@llguidance"]["calls"] == 1.0
    assert cost["reason_then_constrain[answer]@llguidance"]["calls"] == 2.0
    _check_step_costs(replay.generations, cost["reason_then_constrain[answer]@llguidance"])
    section = sections["thinking"]["arms"][0]
    assert section["n"] == 2 and section["calls"] == 1.0
    assert section["closed"] + section["cut"] + section["no_answer"] == 2
    assert section["cut"] == sum(1 for g in thinks if g.think_cut is not None)
    assert section["cut_at_budget"] == sum(1 for g in thinks if g.think_cut == "budget")
    assert section["cut_at_budget"] + section["cut_in_loop"] == section["cut"]
    toll = {a["key"]: a for a in sections["mask_toll"]["arms"]}["think_then_constrain[answer]@llguidance"]
    assert toll["part"] == "answer" and toll["measured"] == 2
    everyone = next(g for g in toll["groups"] if g["group"] == "all")
    answers = [g.mask_toll.answer for g in thinks if g.mask_toll is not None and g.mask_toll.answer is not None]
    assert everyone["mean_share"] == pytest.approx(sum(a.mean_share for a in answers) / len(answers))
    cut_answers = sum(1 for g in thinks if g.finish_reason in ("length", "loop"))
    arms = {a["key"]: a for a in result["arms"]}
    think_arm = arms["think_then_constrain[answer]@llguidance"]
    assert think_arm["truncated"] + think_arm["looped"] == cut_answers
    again = tmp_path / "again"
    assert main(["score", str(out / "replay.jsonl"), "--out", str(again), "--quiet"]) == 0
    assert (again / "report.json").read_bytes() == (out / "report.json").read_bytes()
    chart = (out / "mask_toll.svg").read_text(encoding="utf-8")  # the toll's chart, redrawn by score alike
    assert chart == (again / "mask_toll.svg").read_text(encoding="utf-8")
    assert "think_then_constrain[answer]@llguidance (answer), " in chart  # a group's mark, from the answer part
    assert "<svg " in (out / "report.html").read_text(encoding="utf-8").split("The mask")[-1]


def _check_step_costs(generations: list[GenerationRecord], two_turns: dict[str, Any]) -> None:
    """The run has no unconstrained arm: the free turn's own cost is on each
    packaged answer (``step``), and counted in its arm's cost figures."""
    packaged = [g for g in generations if g.condition.arm == "reason_then_constrain"]
    steps = [g.step for g in packaged if g.step is not None]
    assert len(steps) == len(packaged) == 2
    assert all(s.completion_tokens > 0 and s.seconds > 0 and s.prompt_tokens > 0 for s in steps)
    assert two_turns["unknown_step_costs"] == 0
    assert two_turns["completion_tokens"] >= sum(s.completion_tokens for s in steps) / 2
    assert two_turns["completion_tokens"] == pytest.approx(
        sum(g.completion_tokens + s.completion_tokens for g, s in zip(packaged, steps)) / 2)
    assert two_turns["seconds"] == pytest.approx(sum(g.seconds + s.seconds for g, s in zip(packaged, steps)) / 2)
    assert two_turns["steps_cut"] == sum(s.finish_reason in ("length", "loop") for s in steps)


def _check_answer_part(gen: GenerationRecord) -> None:
    """The toll's answer part is over the steps after the stop string: fewer
    than the call's, its first refusal counted from its own first step and
    placed in the answer text (a JSON member, never the thinking)."""
    toll = gen.mask_toll
    assert toll is not None and toll.answer is not None, toll
    answer = toll.answer
    assert 0 < answer.steps < toll.steps and answer.refused_top <= toll.refused_top
    assert answer.min_share >= toll.min_share
    if answer.first_refused_step is not None:
        assert answer.first_refused_char is not None and answer.first_refused_char <= len(gen.text)
        assert answer.first_refused_at is not None and answer.first_refused_at != THINKING
    else:
        assert answer.refused_top == 0
