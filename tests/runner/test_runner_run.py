"""The run loop on the scripted backend: order, two-turn reuse, exclusions,
the canary, and resuming an interrupted run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import runfakes

from conformbench.errors import CanaryFailedError, UsageError
from conformbench.records.replay_file import read_replay
from conformbench.reports.rescore import score_replays
from conformbench.runner.run import execute
from conformbench.runner.spec import parse_spec


@pytest.fixture(autouse=True)
def _clear_calls() -> None:
    runfakes.CALLS.clear()


def _run(out: Path, force: bool = False, **task: object) -> Path:
    execute(parse_spec(runfakes.fake_spec(out, **task)), force=force)
    return out / "replay.jsonl"


def test_units_keep_an_item_together_and_two_turn_arms_after_their_source(
        tmp_path: Path) -> None:
    replay = read_replay(_run(tmp_path, n=3))
    keys = [(g.item_id, g.condition.arm) for g in replay.generations]
    # the packaging turn follows the free text it extends (prompt cache reuse)
    arms = ["unconstrained", "reason_then_constrain", "prompt_only", "constrained"]
    assert keys == [(f"q{i}", a) for i in range(3) for a in arms]
    sent = [json.loads(r.prompt.messages[-1].content)["arm"] for r in runfakes.CALLS.requests]
    assert sent[:4] == ["unconstrained", "package", "prompt_only", "constrained"]
    assert [r.item.id for r in replay.items] == ["q0", "q1", "q2"]
    assert replay.models[0].label == "fake-model"


def test_reason_then_constrain_reuses_the_unconstrained_text(tmp_path: Path) -> None:
    replay = read_replay(_run(tmp_path, n=2))
    free = {g.item_id: g.text for g in replay.generations if g.condition.arm == "unconstrained"}
    rtc = [g for g in replay.generations if g.condition.arm == "reason_then_constrain"]
    assert [g.free_text for g in rtc] == [free["q0"], free["q1"]]
    assert json.loads(rtc[0].prompt.messages[-1].content)["free"] == free["q0"]
    # the shared step's cost is recorded on the answer that packaged it: the unconstrained answer's own
    unc = {g.item_id: g for g in replay.generations if g.condition.arm == "unconstrained"}
    for g in rtc:
        assert g.step is not None and g.step.finish_reason == unc[g.item_id].finish_reason
        assert (g.step.prompt_tokens, g.step.completion_tokens, g.step.seconds) == (
            unc[g.item_id].prompt_tokens, unc[g.item_id].completion_tokens, unc[g.item_id].seconds)
    assert all(g.step is None for g in replay.generations if g.condition.arm != "reason_then_constrain")
    # 2 items x 4 conditions, no extra free-text turn
    assert len(runfakes.CALLS.requests) == 8
    constrained = [r for r in runfakes.CALLS.requests if r.constraint is not None]
    assert len(constrained) == 4
    assert all(r.constraint.engine == "llguidance" for r in constrained)  # type: ignore[union-attr]


def test_two_turn_arm_alone_generates_its_own_free_turn(tmp_path: Path) -> None:
    replay = read_replay(_run(tmp_path, n=2, arms=["reason_then_constrain"]))
    assert [g.free_text for g in replay.generations] == ["So the answer is 1.", "I think 1."]
    assert len(runfakes.CALLS.requests) == 4
    # its free turn's own cost is on the answer (the scripted backend: 10 prompt tokens, text/3 generated)
    steps = [g.step for g in replay.generations]
    assert [(s.prompt_tokens, s.completion_tokens) for s in steps if s is not None] == [
        (10, len("So the answer is 1.") // 3), (10, len("I think 1.") // 3)]
    assert all(s is not None and s.seconds > 0 and s.finish_reason == "stop" for s in steps)


def test_the_tasks_stop_strings_reach_each_request(tmp_path: Path) -> None:
    _run(tmp_path, n=2)
    stops = {json.loads(r.prompt.messages[-1].content)["arm"]: r.settings.stop
             for r in runfakes.CALLS.requests}
    assert stops == {"unconstrained": (runfakes.FREE_TEXT_STOP,), "package": (),
                     "prompt_only": (), "constrained": ()}
    assert all(r.settings.max_tokens == 32 for r in runfakes.CALLS.requests)


def test_an_own_free_turn_stops_like_the_unconstrained_generation(tmp_path: Path) -> None:
    _run(tmp_path, n=1, arms=["reason_then_constrain"])
    free, package = runfakes.CALLS.requests
    assert free.settings.stop == (runfakes.FREE_TEXT_STOP,) and free.constraint is None
    assert package.settings.stop == () and package.constraint is not None


def test_unsupported_schema_is_recorded_as_an_exclusion(tmp_path: Path) -> None:
    replay = read_replay(_run(tmp_path, n=3, params={"unsupported": ["q1"]}))
    excluded = [g for g in replay.generations if g.finish_reason == "excluded"]
    assert {(g.item_id, g.condition.arm) for g in excluded} == {
        ("q1", "constrained"), ("q1", "reason_then_constrain")}
    assert all("x-unsupported is not supported" in (g.excluded or "") for g in excluded)
    assert len(replay.generations) == 12


def test_a_cell_the_task_excludes_is_recorded_and_never_sent(tmp_path: Path) -> None:
    replay = read_replay(_run(tmp_path, n=3, params={"skip_cells": ["q1/prompt_only"]}))
    excluded = [g for g in replay.generations if g.finish_reason == "excluded"]
    assert [(g.item_id, g.condition.arm, g.excluded) for g in excluded] == [
        ("q1", "prompt_only", "no prompt for this cell")]
    sent = [json.loads(r.prompt.messages[-1].content) for r in runfakes.CALLS.requests]
    assert {"arm": "prompt_only", "i": 1} not in sent and {"arm": "prompt_only", "i": 0} in sent
    q1 = {g.condition.arm: g.finish_reason for g in replay.generations if g.item_id == "q1"}
    assert q1 == {"unconstrained": "stop", "reason_then_constrain": "stop", "prompt_only": "excluded",
                  "constrained": "stop"}  # the item's other cells ran
    assert len(replay.generations) == 12


def test_canary_runs_per_engine_and_is_recorded(tmp_path: Path) -> None:
    execute(parse_spec(runfakes.fake_spec(tmp_path, n=1, canary=True)))
    model = read_replay(tmp_path / "replay.jsonl").models[0]
    assert model.canary["llguidance"]["passed"] is True
    assert model.canary["llguidance"]["text"].startswith('{"canary": "cb-')


def test_canary_failure_stops_before_any_generation(tmp_path: Path) -> None:
    spec = parse_spec(runfakes.fake_spec(tmp_path, n=1, canary=True,
                                         model={"extra": {"broken": True}}))
    with pytest.raises(CanaryFailedError, match=r"engine 'llguidance'.*model 'fake-model'"):
        execute(spec)
    assert read_replay(tmp_path / "replay.jsonl").generations == []
    assert len(runfakes.CALLS.requests) == 1  # the canary request alone


def test_resume_after_a_cut_mid_line_loses_and_repeats_nothing(tmp_path: Path) -> None:
    full = tmp_path / "full"
    _run(full)
    reference = score_replays([full / "replay.jsonl"]).model_dump(exclude={"replays"})
    cut = tmp_path / "cut"
    path = _run(cut)
    data = path.read_bytes()
    lines = data.split(b"\n")
    keep = b"\n".join(lines[:14]) + b"\n" + lines[14][:30]  # 14 whole lines + half a line
    path.write_bytes(keep)
    runfakes.CALLS.clear()
    summary = execute(parse_spec(runfakes.fake_spec(cut)))
    assert summary.truncated_tail == 30
    replay = read_replay(path)
    keys = [g.key for g in replay.generations]
    assert len(keys) == len(set(keys)) == 24
    assert summary.skipped + summary.generated == 24 and summary.generated == len(
        runfakes.CALLS.requests)
    assert score_replays([path]).model_dump(exclude={"replays"}) == reference
    # a third run has nothing left to do and loads no backend
    runfakes.CALLS.clear()
    again = execute(parse_spec(runfakes.fake_spec(cut)))
    assert again.generated == 0 and again.skipped == 24 and not runfakes.CALLS.requests


def test_a_different_spec_in_the_same_out_dir_is_refused(tmp_path: Path) -> None:
    _run(tmp_path, n=2)
    with pytest.raises(UsageError, match="holds a run of a different spec.*--force"):
        _run(tmp_path, n=2, arms=["constrained"])
    with pytest.raises(UsageError, match="holds a run of a different spec"):
        _run(tmp_path, n=1)  # a smaller n is not a growth
    path = _run(tmp_path, n=3, arms=["constrained"], force=True)
    assert len(read_replay(path).generations) == 3
    assert len(list(tmp_path.glob("replay.*.jsonl.bak"))) == 1


def test_only_operational_keys_changed_resumes(tmp_path: Path) -> None:
    """--threads, --concurrency, --timeout, retries and the API-key variable
    do not change what is generated: the run resumes, nothing is redone."""
    half = tmp_path / "replay.jsonl"
    _run(tmp_path, n=2)
    lines = half.read_text(encoding="utf-8").splitlines(keepends=True)
    gens = [i for i, line in enumerate(lines) if '"kind":"generation"' in line]
    # interrupted: the last 3 generations lost (and the end-of-run model record after them)
    half.write_text("".join(lines[:gens[-3]]), encoding="utf-8")
    runfakes.CALLS.clear()
    model = {"threads": 1, "concurrency": 9, "timeout_s": 5.0, "max_retries": 0}
    again = execute(parse_spec(runfakes.fake_spec(tmp_path, n=2, model=model)))
    assert again.generated == 3 == len(runfakes.CALLS.requests) and again.skipped == 5


def test_a_refusal_names_each_changed_key_with_both_values(tmp_path: Path) -> None:
    _run(tmp_path, n=2)
    with pytest.raises(UsageError) as caught:
        _run(tmp_path, n=2, seed=7, model={"n_ctx": 512})
    message = str(caught.value)
    assert "models[0].n_ctx: 4096 in the replay, 512 now" in message
    assert "tasks[0].seed: 0 in the replay, 7 now" in message
    assert "\n" not in message


def test_a_larger_n_grows_the_run_and_reuses_what_is_recorded(tmp_path: Path) -> None:
    fresh = _run(tmp_path / "fresh", n=3)
    reference = score_replays([fresh]).model_dump(exclude={"replays"})
    path = _run(tmp_path / "grown", n=2)
    runfakes.CALLS.clear()
    summary = execute(parse_spec(runfakes.fake_spec(tmp_path / "grown", n=3)))
    assert summary.grown == {"fake-qa": (2, 3)}
    assert summary.skipped == 8 and summary.generated == 4 == len(runfakes.CALLS.requests)
    replay = read_replay(path)
    assert replay.header.spec.tasks[0].n == 3
    assert len(replay.header.grown) == 1 and "n 2 -> 3" in replay.header.grown[0]
    assert [i.item.id for i in replay.items] == ["q0", "q1", "q2"]
    assert score_replays([path]).model_dump(exclude={"replays"}) == reference


def test_growing_a_replay_with_a_cut_last_line_keeps_every_whole_record(
        tmp_path: Path) -> None:
    path = _run(tmp_path, n=2)
    data = path.read_bytes()
    path.write_bytes(data + data.split(b"\n")[-2][:40])  # half of a record, no newline
    runfakes.CALLS.clear()
    summary = execute(parse_spec(runfakes.fake_spec(tmp_path, n=3)))
    assert summary.generated == 4 and summary.truncated_tail == 40
    replay = read_replay(path)
    assert replay.truncated_tail == 0 and not replay.superseded
    assert len({g.key for g in replay.generations}) == len(replay.generations) == 12


def test_growing_is_refused_when_a_recorded_item_changed(tmp_path: Path) -> None:
    path = _run(tmp_path, n=2)
    text = path.read_text().replace('"input":{"i":1,', '"input":{"i":7,')
    path.write_text(text)
    before = path.read_bytes()
    with pytest.raises(UsageError, match="item 'q1' of task 'fake-qa' differs between .*replay.jsonl and the larger run"):
        _run(tmp_path, n=3)
    assert path.read_bytes() == before


def test_a_damaged_replay_is_refused_unless_forced(tmp_path: Path) -> None:
    (tmp_path / "replay.jsonl").write_text("garbage\n{}\n")
    with pytest.raises(UsageError, match="not a JSON line.*--force"):
        _run(tmp_path, n=1)
    assert len(read_replay(_run(tmp_path, n=1, force=True)).generations) == 4


@pytest.mark.long
@pytest.mark.slow
@pytest.mark.server
def test_real_server_run_batches_requests_and_checks_the_server_canary(
        tmp_path: Path, llama_server: str) -> None:
    data = {
        "models": [{"label": "served", "backend": "openai", "model": "smollm2",
                    "base_url": llama_server, "concurrency": 4,
                    "extra": {"response_format_dialect": "json_object_schema"}}],
        "tasks": [{"name": "gsm8k", "n": 2, "engines": ["server"],
                   "arms": ["unconstrained", "prompt_only[answer]", "constrained[answer]",
                            "reason_then_constrain[answer]"]}],
        "decoding": {"max_tokens": 24},
        "out": str(tmp_path),
        "quiet": True,
    }
    summary = execute(parse_spec(data))
    assert summary.generated == 8 and summary.canary["served"]["server"]["passed"] is True
    replay = read_replay(tmp_path / "replay.jsonl")
    gens = {(g.item_id, g.condition.arm): g for g in replay.generations}
    for item in ("gsm8k_test_0", "gsm8k_test_1"):
        assert json.loads(gens[(item, "constrained")].text).keys() == {"answer"}
        rtc = gens[(item, "reason_then_constrain")]
        assert rtc.free_text == gens[(item, "unconstrained")].text
    result = score_replays([tmp_path / "replay.jsonl"]).results[0]
    validity = {a.key: a.validity for a in result.arms}
    assert validity["constrained[answer]@server"] is not None
    assert validity["constrained[answer]@server"].rate == 1.0


def test_replays_without_the_format_key_still_resume(tmp_path: Path) -> None:
    """A header written before the key existed (replay format 1, defaults
    left out) reads it as its default, so the run resumes; asking for
    asserted formats on it is refused with the way to rescore instead."""
    path = _run(tmp_path, n=2)
    header, rest = path.read_text(encoding="utf-8").split("\n", 1)
    old = json.loads(header)
    del old["version"], old["spec"]["format_assertion"]
    path.write_text(json.dumps({**old, "format": "conformbench.replay/1"}) + "\n" + rest, encoding="utf-8")
    assert read_replay(path).header.spec.format_assertion is False
    runfakes.CALLS.clear()
    summary = execute(parse_spec(runfakes.fake_spec(tmp_path, n=2)))
    assert summary.generated == 0 and summary.skipped == 8 and not runfakes.CALLS.requests
    data = runfakes.fake_spec(tmp_path, n=2)
    data["format_assertion"] = True
    with pytest.raises(UsageError, match=r"differ only in format_assertion.*'conformbench score --format-assertion'"):
        execute(parse_spec(data))
    data = runfakes.fake_spec(tmp_path / "asserted", n=2)
    data["format_assertion"] = True
    execute(parse_spec(data))
    asserted = tmp_path / "asserted" / "replay.jsonl"
    assert read_replay(asserted).header.spec.format_assertion is True
    assert score_replays([asserted]).format_mode == "assert"
    assert score_replays([path]).format_mode == "annotate"
    assert score_replays([asserted], format_assertion=False).format_mode == "annotate"
    with pytest.raises(UsageError, match="different format modes"):
        score_replays([path, asserted])
