"""Every form of the --fail-if grammar beyond METRIC[GLOB] OP NUMBER
(interval bounds, a task scope, error_rate, percent literals, the condition
behind a ConCodeEval cell) and every refusal, after scoring and before a
run's first generation."""

from __future__ import annotations

from pathlib import Path

import pytest
import runfakes

import conformbench
from conformbench.errors import ConformbenchError, UnknownNameError, UsageError
from conformbench.records.results import ScoredRun
from conformbench.reports.rescore import score_replays
from conformbench.runner.run import execute
from conformbench.runner.shipped import shipped_replays
from conformbench.runner.spec import parse_spec
from conformbench.scoring.gate import evaluate_gates, parse_gate
from conformbench.scoring.gate_plan import check_gates_for_spec


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> ScoredRun:
    out = tmp_path_factory.mktemp("gate-forms")
    execute(parse_spec(runfakes.fake_spec(out)))
    return score_replays([out / "replay.jsonl"])


@pytest.mark.parametrize(
    ("text", "task", "bound", "metric", "glob", "threshold"),
    [
        ("lower(accuracy[constrained*]) < 0.3", None, "lower", "accuracy", "constrained*", 0.3),
        ("upper( validity ) >= 90%", None, "upper", "validity", None, 0.9),
        ("gsm8k.accuracy[constrained*] < 0.5", "gsm8k", None, "accuracy", "constrained*", 0.5),
        ("bfcl-simple.validity[prompt_only*] <= 1.5%", "bfcl-simple", None, "validity", "prompt_only*", 0.015),
        ("lower(gsm8k.accuracy[constrained[answer]]) > 0", "gsm8k", "lower", "accuracy", "constrained[answer]", 0),
        ("error_rate[*] > 0", None, None, "error_rate", "*", 0.0),
        ("wrong_but_valid > 20%", None, None, "wrong_but_valid", None, 0.2),
    ],
)
def test_parse_forms(text: str, task: str | None, bound: str | None, metric: str, glob: str | None,
                     threshold: float) -> None:
    gate = parse_gate(text)
    assert (gate.task, gate.bound, gate.metric, gate.glob) == (task, bound, metric, glob)
    assert gate.threshold == pytest.approx(threshold)


@pytest.mark.parametrize(
    "text",
    ["lower(accuracy < 0.3", "lower() < 0.3", "lower(accuracy)) < 0.3", "accuracy > 20%%",
     "accuracy > %20", "middle(accuracy) < 0.3", ".accuracy > 0", "gsm8k. accuracy > 0"],
)
def test_malformed_forms_are_usage_errors(text: str) -> None:
    with pytest.raises(UsageError):
        parse_gate(text)


def test_bounds_read_the_wilson_interval(scored: ScoredRun) -> None:
    arm = next(a for a in scored.results[0].arms if a.key == "constrained[answer]@llguidance")
    assert arm.accuracy is not None
    lo, hi = arm.accuracy.ci95
    (low,) = evaluate_gates([parse_gate("lower(accuracy[constrained[answer]]) < 0.3")], scored)
    (high,) = evaluate_gates([parse_gate("upper(accuracy[constrained[answer]]) < 0.3")], scored)
    assert (low.value, high.value) == (lo, hi) and lo < arm.accuracy.rate < hi
    assert low.tripped == (lo < 0.3) and high.tripped == (hi < 0.3)
    assert "lower bound" in low.describe()


def test_task_scope_and_percent(scored: ScoredRun) -> None:
    plain = evaluate_gates([parse_gate("accuracy[constrained*] < 50%")], scored)
    scoped = evaluate_gates([parse_gate("fake-qa.accuracy[constrained*] < 0.5")], scored)
    assert [(c.label, c.value, c.tripped) for c in plain] == [(c.label, c.value, c.tripped) for c in scoped]
    with pytest.raises(UnknownNameError, match=r"no task 'fake-q' in this run \(did you mean 'fake-qa'\?\)"):
        evaluate_gates([parse_gate("fake-q.accuracy < 0.5")], scored)


def test_error_rate_counts_error_finishes(scored: ScoredRun) -> None:
    checks = evaluate_gates([parse_gate("error_rate[*] > 0")], scored)
    by_label = {c.label: c for c in checks}
    for arm in scored.results[0].arms:
        assert by_label[arm.key].value == arm.errors / arm.n
    erred = [a for a in scored.results[0].arms if a.errors]
    assert [c.label for c in checks if c.tripped] == [a.key for a in erred]


def test_bounds_of_a_section_metric_are_refused(scored: ScoredRun) -> None:
    with pytest.raises(UsageError, match=r"lower\(\) reads an interval, which only the per-condition"):
        evaluate_gates([parse_gate("lower(n_right[unconstrained]) < 4")], scored)


@pytest.mark.long
def test_a_concodeeval_cell_names_the_condition_it_read() -> None:
    run = score_replays([shipped_replays()["concodeeval-generation"]])
    (check,) = evaluate_gates([parse_gate("gen_acc[json->json] < 2")], run)
    assert check.source == "json->json/0shot/prompt_only[schema]"
    assert check.describe().endswith("(read from json->json/0shot/prompt_only[schema])")
    (full,) = evaluate_gates([parse_gate("gen_acc[json->json/0shot/prompt_only[schema]] < 2")], run)
    assert full.value == check.value and full.source is None


@pytest.mark.parametrize(
    ("text", "error", "message"),
    [
        ("acuracy > 0.1", UnknownNameError, r"unknown metric 'acuracy' \(did you mean 'accuracy'\?\)"),
        ("gen_acc[json->json] < 0.5", UsageError, r"this run has no 'gen_acc', which needs the generation task"),
        ("pass_at_k_validity[*] < 0.5", UsageError, r"no 'pass_at_k_validity', which needs --samples K > 1"),
        ("gen_ac < 0.5", UnknownNameError, r"unknown metric 'gen_ac' \(did you mean 'gen_acc'\?\)"),
        ("gsm8k.accuracy < 0.5", UnknownNameError, r"no task 'gsm8k' in this run; known: fake-qa"),
        ("accuracy[nothing*] > 0.1", UsageError, r"matches none of the conditions this run makes; known: "),
        ("upper(n_right[x]) > 1", UsageError, r"upper\(\) reads an interval"),
    ],
)
def test_refused_before_the_run(tmp_path: Path, text: str, error: type[Exception], message: str) -> None:
    spec = parse_spec(runfakes.fake_spec(tmp_path / "out"))
    with pytest.raises(error, match=message):
        check_gates_for_spec([parse_gate(text)], spec)
    with pytest.raises(error, match=message):
        conformbench.run(runfakes.fake_spec(tmp_path / "out"), fail_if=[text])
    assert not (tmp_path / "out" / "replay.jsonl").exists()  # nothing was generated


def test_known_gates_pass_the_pre_run_check(tmp_path: Path) -> None:
    spec = parse_spec(runfakes.fake_spec(tmp_path / "out"))
    gates = [parse_gate(t) for t in ("n_right[whatever] < 1", "fake-qa.error_rate[*] > 0",
                                     "lower(accuracy[constrained[answer]]) < 0.3")]
    check_gates_for_spec(gates, spec)


@pytest.mark.parametrize("samples", [1, 3])
def test_the_metrics_a_refusal_lists_are_the_metrics_accepted(tmp_path: Path, samples: int) -> None:
    """Issue #44: pass_at_k_validity was listed as known before a one-sample
    run, then refused after it. Every metric the refusal lists passes the
    check, and the sampling metrics are listed exactly when samples > 1."""
    spec = parse_spec(runfakes.fake_spec(tmp_path / "out"))
    spec = spec.model_copy(update={"decoding": spec.decoding.model_copy(update={"samples": samples})})
    with pytest.raises(ConformbenchError) as refused:
        check_gates_for_spec([parse_gate("no_such_metric > 0")], spec)
    listed = str(refused.value).rpartition("known: ")[2].split(", ")
    assert ("pass_at_k_validity" in listed) == (samples > 1)
    for metric in listed:
        check_gates_for_spec([parse_gate(f"{metric} > 2")], spec)
