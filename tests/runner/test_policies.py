"""Arms as policies on the scripted backend: repair, resample and fallback
record every round, stop at the first valid answer or the round limit,
share a turn identical to another arm's, resume between rounds without
generating anything twice, and rescore from the replay alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import runfakes

from conformbench.arms import RESAMPLE_SEED_STEP, RESAMPLE_TEMPERATURE
from conformbench.records.replay import GenerationRecord
from conformbench.records.replay_file import read_replay
from conformbench.reports.rescore import score_replays
from conformbench.runner.run import execute
from conformbench.runner.spec import parse_spec


@pytest.fixture(autouse=True)
def _clear_calls() -> None:
    runfakes.CALLS.clear()


def _run(out: Path, arms: list[str], **decoding: object) -> list[GenerationRecord]:
    spec = runfakes.fake_spec(out, arms=arms)
    spec["decoding"].update(decoding)
    execute(parse_spec(spec))
    return read_replay(out / "replay.jsonl").generations


def _rounds(gens: list[GenerationRecord], arm: str) -> dict[str, list[GenerationRecord]]:
    out: dict[str, list[GenerationRecord]] = {}
    for gen in gens:
        if gen.condition.arm == arm:
            out.setdefault(gen.item_id, []).append(gen)
    return out


def test_repair_re_asks_an_invalid_answer_with_the_validators_errors(tmp_path: Path) -> None:
    gens = _run(tmp_path, ["prompt_only", "repair"])
    first = {g.item_id: g for g in gens if g.condition.arm == "prompt_only"}
    repair = _rounds(gens, "repair")
    for item, rounds in repair.items():
        assert [g.round for g in rounds] == list(range(len(rounds)))
        # round 0 is prompt_only's answer, generated once
        assert rounds[0].text == first[item].text and rounds[0].shared == "prompt_only[answer]"
        valid_first = first[item].text.startswith("{")
        # no item of a valid first answer gets a second round
        assert len(rounds) == (1 if valid_first else 2), item
    second = repair["q1"][1]  # "answer: 5" does not parse: fed back like any error
    assert [m.role for m in second.prompt.messages] == ["user", "assistant", "user"]
    assert second.prompt.messages[1].content == "answer: 5"
    assert "parse" in second.prompt.messages[2].content and second.text == '{"answer": 2}'
    # 6 prompt_only answers, 2 repair turns; round 0 never sent twice
    assert len(runfakes.CALLS.requests) == 6 + 2


def test_the_round_limit_is_recorded_and_kept(tmp_path: Path) -> None:
    gens = _run(tmp_path, ["prompt_only", "repair"], max_rounds=1)
    assert all(g.round == 0 for g in gens)
    header = read_replay(tmp_path / "replay.jsonl").header
    assert header.spec.decoding.max_rounds == 1
    other = _run(tmp_path / "b", ["prompt_only"])
    assert other and read_replay(tmp_path / "b" / "replay.jsonl").header.spec.decoding.max_rounds is None


def test_resample_draws_each_round_with_its_own_seed_and_temperature(tmp_path: Path) -> None:
    gens = _run(tmp_path, ["prompt_only", "resample"])
    rounds = _rounds(gens, "resample")
    assert len(rounds["q0"]) == 1 and len(rounds["q1"]) == 2
    again = rounds["q1"][1]
    assert again.temperature == RESAMPLE_TEMPERATURE and again.seed == RESAMPLE_SEED_STEP
    assert again.prompt == rounds["q1"][0].prompt


def test_fallback_takes_constrained_turn_generated_once(tmp_path: Path) -> None:
    gens = _run(tmp_path, ["prompt_only", "constrained", "fallback"])
    rounds = _rounds(gens, "fallback")
    constrained = {g.item_id: g for g in gens if g.condition.arm == "constrained"}
    assert len(rounds["q0"]) == 1 and len(rounds["q1"]) == 2
    assert rounds["q1"][1].text == constrained["q1"].text
    # one of the two generated it (the one run first), the other shares it
    assert {rounds["q1"][1].shared, constrained["q1"].shared} == {
        None, "fallback[answer]@llguidance#round=1"}
    # prompt_only 6 + constrained 6: fallback generated nothing of its own
    assert len(runfakes.CALLS.requests) == 12


def test_a_kill_between_rounds_resumes_at_the_next_round(tmp_path: Path) -> None:
    _run(tmp_path, ["prompt_only", "repair"])
    replay = tmp_path / "replay.jsonl"
    lines = replay.read_bytes().splitlines(keepends=True)
    # drop the last round of the run: as if killed before it was written
    last = max(i for i, line in enumerate(lines) if json.loads(line).get("round"))
    dropped = json.loads(lines[last])
    replay.write_bytes(b"".join(lines[:last] + lines[last + 1:]))
    runfakes.CALLS.clear()
    gens = _run(tmp_path, ["prompt_only", "repair"])
    assert len(runfakes.CALLS.requests) == 1  # that round alone
    assert runfakes.CALLS.requests[0].prompt.messages[-1].content == dropped["prompt"]["messages"][-1]["content"]
    assert sum(g.condition.arm == "repair" for g in gens) == 8


def test_the_replay_alone_scores_every_round_and_its_cost(tmp_path: Path) -> None:
    _run(tmp_path, ["prompt_only", "constrained", "repair", "fallback"])
    run = score_replays([tmp_path / "replay.jsonl"])
    (result,) = run.results
    arms = {a.key: a for a in result.arms}
    # repair's answer is its last round: every item valid in the end
    assert arms["repair[answer]"].validity is not None and arms["repair[answer]"].validity.rate == 1.0
    assert arms["prompt_only[answer]"].validity is not None and arms["prompt_only[answer]"].validity.k == 4
    (cost,) = [s for s in result.sections if s.name == "cost"]
    by_key = {a["key"]: a for a in cost.data["arms"]}
    assert by_key["repair[answer]"]["calls"] == pytest.approx(8 / 6)
    assert by_key["repair[answer]"]["shared_calls"] == 6
    assert [r["validity"]["k"] for r in by_key["repair[answer]"]["by_round"]] == [4, 6]
    assert cost.metrics["mean_calls[repair[answer]]"] == pytest.approx(8 / 6)
    roles = {(c.from_key, c.to_key): c.role for c in result.comparisons}
    assert roles[("prompt_only[answer]", "repair[answer]")] == "policy"
    assert roles[("constrained[answer]@llguidance", "repair[answer]")] == "policy"
    assert roles[("prompt_only[answer]", "constrained[answer]@llguidance")] == "headline"


def test_the_ledger_shows_each_items_rounds_and_the_errors_fed_back(tmp_path: Path) -> None:
    from conformbench.reports.text import samples_text

    _run(tmp_path, ["prompt_only", "repair"])
    (result,) = score_replays([tmp_path / "replay.jsonl"]).results
    rows = {r.item_id: r for r in result.ledger}
    (earlier,) = rows["q1"].rounds["repair[answer]"]
    assert earlier.state == "invalid/wrong" and earlier.errors[0].startswith("parse: ")
    assert rows["q1"].states["repair[answer]"] == "valid/right"
    assert samples_text(rows["q1"], "repair[answer]").startswith("after round 1 invalid/wrong (parse: ")
    assert "repair[answer]" not in rows["q0"].rounds and samples_text(rows["q0"], "repair[answer]") == ""


def test_fail_if_reads_the_mean_calls_of_an_arm(tmp_path: Path) -> None:
    from conformbench.scoring.gate import evaluate_gates, parse_gate

    _run(tmp_path, ["prompt_only", "repair"])
    run = score_replays([tmp_path / "replay.jsonl"])
    tripped = [c for c in evaluate_gates([parse_gate("mean_calls[repair*] > 1.3")], run) if c.tripped]
    assert [c.label for c in tripped] == ["repair[answer]"]
    assert not [c for c in evaluate_gates([parse_gate("mean_calls[repair*] > 1.5")], run) if c.tripped]


def test_the_replay_backend_serves_every_round_again(tmp_path: Path) -> None:
    """A rerun through the replay backend makes the same rounds with the
    same texts: shared answers are served from the generation they share,
    resample's rounds in order, fallback's free first round without its engine."""
    arms = ["prompt_only", "constrained", "repair", "resample", "fallback"]
    live = _run(tmp_path / "live", arms)
    spec = runfakes.fake_spec(tmp_path / "again", arms=arms)
    spec["models"] = [{"label": "fake-model", "backend": "replay", "model": str(tmp_path / "live" / "replay.jsonl")}]
    execute(parse_spec(spec))
    again = read_replay(tmp_path / "again" / "replay.jsonl").generations
    assert [(g.key, g.text, g.shared) for g in again] == [(g.key, g.text, g.shared) for g in live]
    assert all(g.finish_reason != "error" for g in again)


def test_repair_in_the_concodeeval_generation_experiment(tmp_path: Path) -> None:
    """ConCodeEval generation cells run repair too: the feedback comes from
    the output format's reading (YAML here), and IS% is reported after each round."""
    spec = {"models": [{"label": "m", "backend": "fake", "extra": {"reply": "It is sunny: [yes"}}],
            "tasks": [{"name": "generation", "n": 2, "schema_formats": ["json"], "output_formats": ["yaml"],
                       "arms": ["prompt_only", "repair"]}],
            "decoding": {"max_tokens": 16}, "out": str(tmp_path), "canary": False, "quiet": True}
    execute(parse_spec(spec))
    gens = read_replay(tmp_path / "replay.jsonl").generations
    repair = _rounds(gens, "repair")
    assert all(len(rounds) == 3 for rounds in repair.values())  # never valid: the round limit
    feedback = next(iter(repair.values()))[1].prompt.messages[-1].content
    assert "- at (root): parse: " in feedback and feedback.endswith("the corrected YAML.")
    (result,) = score_replays([tmp_path / "replay.jsonl"]).results
    (cost,) = [s for s in result.sections if s.name == "cost"]
    rounds = next(a for a in cost.data["arms"] if a["key"].endswith("repair[schema]"))["by_round"]
    assert [r["unparsed"]["rate"] for r in rounds] == [1.0, 1.0, 1.0]


def test_one_run_says_each_count_by_its_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue #48: 'run: 18 generations', '30 generations' and 'generations=25'
    for one run. Now: the run counts items x conditions, the report says
    those and the answers (later rounds and shared ones named), and the
    model's own count is its calls."""
    from conformbench.reports.text import source_line

    spec = runfakes.fake_spec(tmp_path, arms=["prompt_only", "repair"])
    spec["quiet"] = False
    execute(parse_spec(spec))
    gens = read_replay(tmp_path / "replay.jsonl").generations
    units = len({g.unit_key for g in gens})
    started = next(line for line in capsys.readouterr().err.splitlines() if line.startswith("run: "))
    assert started.startswith(f"run: {units} items×conditions (")
    (src,) = score_replays([tmp_path / "replay.jsonl"]).replays
    later = sum(g.round > 0 for g in gens)
    shared = sum(g.shared is not None for g in gens)
    assert later and shared and (src.units, src.generations, src.shared) == (units, len(gens), shared)
    assert (f"{units} items×conditions, {len(gens)} answers ({later} later rounds of multi-round arms; "
            f"{shared} taken from another arm's identical request, generated once)") in source_line(src)
    # what the model was asked: every answer not taken from another arm's request
    assert len(runfakes.CALLS.requests) == len(gens) - shared
