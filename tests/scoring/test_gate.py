"""The --fail-if grammar and its evaluation over a scored run."""

from __future__ import annotations

import pytest
import runfakes

from conformbench.errors import GateNotEvaluableError, UnknownNameError, UsageError
from conformbench.records.results import ScoredRun
from conformbench.reports.rescore import score_replays
from conformbench.runner.run import execute
from conformbench.runner.spec import parse_spec
from conformbench.scoring.gate import evaluate_gates, parse_gate


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> ScoredRun:
    out = tmp_path_factory.mktemp("gate")
    execute(parse_spec(runfakes.fake_spec(out)))
    return score_replays([out / "replay.jsonl"])


@pytest.mark.parametrize(
    ("text", "metric", "glob", "op", "threshold"),
    [
        ("wrong_but_valid[constrained*] > 0.20", "wrong_but_valid", "constrained*", ">", 0.2),
        ("gen_acc[json->json]<0.5", "gen_acc", "json->json", "<", 0.5),
        ("accuracy[prompt_only[answer]] <= 1e-1", "accuracy", "prompt_only[answer]", "<=", 0.1),
        ("  validity >= .5 ", "validity", None, ">=", 0.5),
        ("accuracy[*] != -2", "accuracy", "*", "!=", -2.0),
    ],
)
def test_parse(text: str, metric: str, glob: str | None, op: str, threshold: float) -> None:
    gate = parse_gate(text)
    assert (gate.metric, gate.glob, gate.op, gate.threshold) == (metric, glob, op, threshold)


@pytest.mark.parametrize(
    "text",
    ["", "> 0.2", "accuracy", "accuracy > ", "accuracy[x > 0.2", "accuracy => 0.2",
     "accuracy > 0.2; import os", "__import__('os') > 1", "accuracy > 0.2 or 1"],
)
def test_malformed_gates_are_usage_errors(text: str) -> None:
    with pytest.raises(UsageError):
        parse_gate(text)


def test_brackets_in_a_glob_are_literal() -> None:
    gate = parse_gate("accuracy[prompt_only[answer]] < 0.1")
    assert gate.matches(("prompt_only[answer]",))
    assert not gate.matches(("prompt_only[a]",))
    assert parse_gate("accuracy[constrained*] < 1").matches(("constrained[answer]@llguidance",))
    assert parse_gate("accuracy[c?nstrained*] < 1").matches(("constrained[x]",))


def test_values_and_trips(scored: ScoredRun) -> None:
    # constrained: 2 valid/right, 3 valid/wrong, 1 truncated of 6
    checks = evaluate_gates([parse_gate("wrong_but_valid[constrained*] > 0.4")], scored)
    assert [(c.label, round(c.value or 0, 4), c.tripped) for c in checks] == [
        ("constrained[answer]@llguidance", 0.5, True),
    ]
    assert "= 0.5" in checks[0].describe()
    # the engine suffix may be left out; the rtc arm is not matched by the glob
    checks = evaluate_gates([parse_gate("accuracy[constrained[answer]] < 0.3")], scored)
    assert [(c.label, c.tripped) for c in checks] == [("constrained[answer]@llguidance", False)]


def test_na_values_make_the_gate_not_evaluable(scored: ScoredRun) -> None:
    """unconstrained has no validity: never a silent pass over it
    (tests/scoring/test_gate_not_evaluable.py has every case)."""
    with pytest.raises(GateNotEvaluableError, match=r"validity is n/a for 1 of the 4 conditions .*\(unconstrained: "):
        evaluate_gates([parse_gate("validity < 0.9")], scored)
    by_label = {c.label: c for c in evaluate_gates([parse_gate("validity[*answer*] < 0.9")], scored)}
    assert by_label["prompt_only[answer]"].tripped
    assert not by_label["reason_then_constrain[answer]@llguidance"].tripped


def test_section_metrics_are_gateable(scored: ScoredRun) -> None:
    checks = evaluate_gates([parse_gate("n_right[unconstrained] < 4")], scored)
    assert [(c.value, c.tripped) for c in checks] == [(3.0, True)]


def test_unknown_metric_and_unmatched_glob(scored: ScoredRun) -> None:
    with pytest.raises(UnknownNameError, match=r"unknown metric 'acuracy' \(did you mean 'accuracy'\?\)"):
        evaluate_gates([parse_gate("acuracy > 0.1")], scored)
    with pytest.raises(UsageError, match=r"matches no condition of accuracy; known: unconstrained"):
        evaluate_gates([parse_gate("accuracy[nothing*] > 0.1")], scored)
