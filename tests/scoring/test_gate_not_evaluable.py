"""A ``--fail-if`` gate that matches an n/a value (a cost the replay did
not record, validity of an arm with no contract, a rate 0 by the task's
definition) cannot be evaluated: one line naming the metric, the conditions
and why, exit 2; never a silent pass. Through the gate itself, ``score``,
``run``'s end-of-run gate, the Python API and the check before a run."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import runfakes

import conformbench
from conformbench.cli.main import main
from conformbench.errors import GateNotEvaluableError, UsageError
from conformbench.records.results import ScoredRun
from conformbench.reports.rescore import score_replays
from conformbench.runner.run import execute
from conformbench.runner.spec import parse_spec
from conformbench.scoring.gate import evaluate_gates, parse_gate
from conformbench.scoring.gate_plan import check_gates_for_spec

RTC = "reason_then_constrain[answer]@llguidance"


def _without_step_costs(replay: Path) -> None:
    """The replay as one made before the free step's cost was recorded: no
    ``step`` on the packaged answers (and no unconstrained arm to take it from)."""
    lines = []
    for line in replay.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        record.pop("step", None)
        lines.append(json.dumps(record))
    replay.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def old_replay(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """6 items; prompt_only, repair (a cost section) and reason_then_constrain
    whose 6 free steps' costs are not recorded."""
    out = tmp_path_factory.mktemp("old")
    execute(parse_spec(runfakes.fake_spec(out, arms=["prompt_only", "repair", "reason_then_constrain"])))
    _without_step_costs(out / "replay.jsonl")
    return out / "replay.jsonl"


@pytest.fixture(scope="module")
def old_run(old_replay: Path) -> ScoredRun:
    return score_replays([old_replay])


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> ScoredRun:
    """The fake run's default arms: unconstrained (no contract) among them."""
    out = tmp_path_factory.mktemp("gate")
    execute(parse_spec(runfakes.fake_spec(out)))
    return score_replays([out / "replay.jsonl"])


def test_the_replay_lacks_the_step_costs(old_run: ScoredRun) -> None:
    (cost,) = [s for s in old_run.results[0].sections if s.name == "cost"]
    (rtc,) = [a for a in cost.data["arms"] if a["key"] == RTC]
    assert rtc["unknown_step_costs"] == 6 and rtc["seconds"] is None
    assert cost.unmeasured[f"mean_seconds[{RTC}]"].startswith("6 of 6 items' free-turn cost not recorded")


@pytest.mark.parametrize("metric", ["mean_seconds", "mean_prompt_tokens", "mean_completion_tokens"])
def test_a_cost_not_recorded_for_some_matched_arm_is_not_evaluable(old_run: ScoredRun, metric: str) -> None:
    """(a): prompt_only's and repair's costs are known, the rtc arm's not:
    the gate used to check the two others alone and pass."""
    with pytest.raises(GateNotEvaluableError) as refused:
        evaluate_gates([parse_gate(f"{metric}[*] > 1e9")], old_run)
    line = str(refused.value)
    assert "\n" not in line
    assert line.startswith(f"--fail-if '{metric}[*] > 1e9' cannot be evaluated: {metric} is n/a for 1 of the 3 "
                           f"conditions it matches ({RTC}: 6 of 6 items' free-turn cost not recorded in this "
                           "replay; rerun to measure)")


def test_a_cost_n_a_for_every_matched_arm_is_not_evaluable(old_run: ScoredRun) -> None:
    """(c): the brief's gate, on the one arm whose cost is n/a (it used to
    say the glob matched no condition)."""
    with pytest.raises(GateNotEvaluableError, match=r"mean_seconds is n/a for 1 of the 1 conditions it matches"):
        evaluate_gates([parse_gate("mean_seconds[reason*] > 5")], old_run)


def test_the_known_costs_still_gate(old_run: ScoredRun) -> None:
    checks = evaluate_gates([parse_gate("mean_seconds[repair*] > 0"), parse_gate("mean_calls[reason*] > 1.5")],
                            old_run)
    assert [(c.label, c.tripped) for c in checks] == [("repair[answer]", True), (RTC, True)]


def test_a_glob_matching_no_arm_is_still_a_usage_error(old_run: ScoredRun) -> None:
    """(b): and the conditions it lists include the n/a one."""
    with pytest.raises(UsageError, match=r"\[zzz\*\] matches no condition of mean_seconds; known: .*"
                       + re.escape(RTC)) as e:
        evaluate_gates([parse_gate("mean_seconds[zzz*] > 5")], old_run)
    assert not isinstance(e.value, GateNotEvaluableError)


def test_a_rate_n_a_for_some_matched_arm_is_not_evaluable(scored: ScoredRun) -> None:
    """(a) for a per-condition rate: unconstrained has no contract, so no
    validity (this gate used to pass over it)."""
    with pytest.raises(GateNotEvaluableError) as refused:
        evaluate_gates([parse_gate("validity < 0.01")], scored)
    assert "validity is n/a for 1 of the 4 conditions it matches (unconstrained: no answer of it was checked " \
           "against a schema (a condition with no contract has no validity))" in str(refused.value)
    with pytest.raises(GateNotEvaluableError, match=r"wrong_but_valid is n/a for 1 of the 4"):
        evaluate_gates([parse_gate("wrong_but_valid > 0.9")], scored)
    # a glob that leaves it out is checked as before
    assert {c.label for c in evaluate_gates([parse_gate("validity[*answer*] < 0.01")], scored)} == {
        "prompt_only[answer]", "constrained[answer]@llguidance", RTC}


def test_a_rate_n_a_for_every_arm_is_not_evaluable(scored: ScoredRun) -> None:
    """(c): fake-qa executes no answer: executable_accuracy is n/a everywhere
    (this gate used to check nothing and pass)."""
    with pytest.raises(GateNotEvaluableError,
                       match=r"executable_accuracy is n/a for 4 of the 4 conditions .*does not execute its answers"):
        evaluate_gates([parse_gate("executable_accuracy < 0.5")], scored)
    with pytest.raises(GateNotEvaluableError, match=r"validity is n/a for 1 of the 1"):
        evaluate_gates([parse_gate("upper(validity[unconstrained]) < 2")], scored)


def test_a_condition_with_no_answer_is_not_evaluable(tmp_path: Path) -> None:
    """Every item left out of the constrained arms (the engine refused their
    schemas): their truncation and error rates are 0 of 0, not 0."""
    spec = runfakes.fake_spec(tmp_path, n=2)
    spec["tasks"][0]["params"] = {"unsupported": ["q0", "q1"]}
    execute(parse_spec(spec))
    run = score_replays([tmp_path / "replay.jsonl"])
    with pytest.raises(GateNotEvaluableError, match=r"error_rate is n/a for 2 of the 4 conditions it matches "
                       r"\(reason_then_constrain\[answer\]@llguidance, constrained\[answer\]@llguidance: "
                       r"it has no answer"):
        evaluate_gates([parse_gate("error_rate > 0")], run)
    assert [c.value for c in evaluate_gates([parse_gate("error_rate[prompt_only*] > 0")], run)] == [0.0]


def test_score_writes_the_reports_then_exits_2_in_one_line(old_replay: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """(d) ``conformbench score``, even with another gate tripped."""
    out = tmp_path / "reports"
    code = main(["score", str(old_replay), "--out", str(out), "--quiet",
                 "--fail-if", "accuracy > 2", "--fail-if", "mean_seconds[*] > 5"])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert len(err.splitlines()) == 1
    assert f"'mean_seconds[*] > 5' cannot be evaluated: mean_seconds is n/a for 1 of the 3 conditions it matches " \
           f"({RTC}: 6 of 6 items' free-turn cost not recorded in this replay; rerun to measure)" in err
    assert f"(reports written in {out})" in err
    assert (out / "report.json").is_file() and (out / "report.md").is_file()


def test_the_python_api_raises(old_replay: Path, tmp_path: Path) -> None:
    """(d) ``conformbench.score``: no ``Published`` whose exit_code says 0."""
    with pytest.raises(GateNotEvaluableError, match=r"mean_seconds is n/a"):
        conformbench.score(old_replay, out=tmp_path, fail_if="mean_seconds[reason*] > 5")
    assert conformbench.score(old_replay, out=tmp_path, fail_if="mean_seconds[repair*] > 1e9").exit_code == 0


def test_the_end_of_run_gate_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """(d) ``conformbench run``: the run's unconstrained arm has no validity;
    the run is made and reported, then the gate is refused."""
    spec = tmp_path / "spec.toml"
    spec.write_text('canary = false\n[[models]]\nlabel = "m"\nbackend = "fake"\n[[tasks]]\nname = "fake-qa"\nn = 4\n',
                    encoding="utf-8")
    out = tmp_path / "out"
    code = main(["run", "--spec", str(spec), "--out", str(out), "--quiet", "--fail-if", "validity < 0.5"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "'validity < 0.5' cannot be evaluated: validity is n/a for 1 of the 4 conditions it matches " \
           "(unconstrained: " in err
    assert (out / "replay.jsonl").is_file() and (out / "report.json").is_file()


def test_a_rate_0_by_definition_is_refused_before_the_run(tmp_path: Path) -> None:
    """ConCodeEval generation makes wrong_but_valid 0 by definition: a gate
    on it could never trip, so it is refused before anything runs."""
    spec = runfakes.fake_spec(tmp_path / "out")
    spec["tasks"] = [{"name": "generation", "n": 2}, {"name": "fake-qa", "n": 2}]
    plan = parse_spec(spec)
    with pytest.raises(GateNotEvaluableError, match=r"wrong_but_valid is 0 by generation's definition"):
        check_gates_for_spec([parse_gate("wrong_but_valid[*] > 0.1")], plan)
    check_gates_for_spec([parse_gate("fake-qa.wrong_but_valid > 0.1")], plan)
    assert not (tmp_path / "out" / "replay.jsonl").exists()
