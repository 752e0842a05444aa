"""``export_inspect``: the shipped GSM8K replay (a real run of the
embedded model) as Inspect AI logs, read back with Inspect's own
``read_eval_log``: per condition the sample count, every scorer's mean over
the samples, the results' rates and intervals and the paired comparisons
equal report.json's."""

from __future__ import annotations

import json
from pathlib import Path
from statistics import mean
from typing import Any

import pytest

import conformbench
from conformbench.exporters.inspect_log import SCORERS, export_inspect
from conformbench.runner.shipped import shipped_replay

log_api = pytest.importorskip("inspect_ai.log")


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, dict[str, Any]]:
    out = tmp_path_factory.mktemp("inspect")
    replay = shipped_replay("gsm8k")
    done = export_inspect([replay], out / "logs")
    conformbench.score(replay, out=out / "scored")
    (result,) = json.loads((out / "scored/report.json").read_text())["results"]
    return done, result


@pytest.mark.long
def test_one_log_per_condition_in_one_eval_set(exported: tuple[Any, dict[str, Any]]) -> None:
    done, result = exported
    logs = [log_api.read_eval_log(str(p)) for p in done.logs]
    assert sorted(log.eval.task_args["condition"] for log in logs) == sorted(a["key"] for a in result["arms"])
    assert {log.eval.eval_set_id for log in logs} == {done.eval_set_id}
    assert len({log.eval.eval_id for log in logs}) == len(logs)
    assert all(log.status == "success" and log.eval.task == "conformbench/gsm8k" for log in logs)


@pytest.mark.long
def test_the_viewers_score_column_is_one_measure(exported: tuple[Any, dict[str, Any]]) -> None:
    """Issue #44: the viewer's SCORE column (each log's headline metric: the
    first score's first metric unless declared) showed validity for the
    grammar arms and accuracy for unconstrained. Every log declares and
    lists first the task's accuracy now."""
    done, result = exported
    arms = {a["key"]: a for a in result["arms"]}
    for path in done.logs:
        log = log_api.read_eval_log(str(path), header_only=True)
        assert log.eval.headline_metric is not None
        assert (log.eval.headline_metric.scorer, log.eval.headline_metric.metric) == ("correct", "accuracy")
        first = log.results.scores[0]
        assert first.name == "correct"
        assert first.metrics["accuracy"].value == arms[log.eval.task_args["condition"]]["accuracy"]["rate"]


def test_counts_and_scores_equal_the_report(exported: tuple[Any, dict[str, Any]]) -> None:
    done, result = exported
    arms = {a["key"]: a for a in result["arms"]}
    for path in done.logs:
        log = log_api.read_eval_log(str(path))
        arm = arms[log.eval.task_args["condition"]]
        assert len(log.samples) == arm["n"] == log.results.total_samples
        scores = {s.name: s for s in log.results.scores}
        assert set(scores) == {name for name, field in SCORERS.items() if arm[field] is not None}
        for name, score in scores.items():
            rate = arm[SCORERS[name]]
            assert mean(float(s.scores[name].value) for s in log.samples) == pytest.approx(rate["rate"])
            assert score.metrics["accuracy"].value == rate["rate"]
            assert [score.metrics["ci95_low"].value, score.metrics["ci95_high"].value] == rate["ci95"]
        cut = sum(s.metadata["cut"] for s in log.samples)
        assert cut == arm["truncated"] and sum(s.metadata["looped"] for s in log.samples) == arm["looped"]
        assert sum(s.output.stop_reason == "max_tokens" for s in log.samples) == cut
        ours = log.results.metadata["conformbench"]
        assert ours["arm"] == arm
        assert ours["comparisons"] == [c for c in result["comparisons"]
                                       if arm["key"] in (c["from_key"], c["to_key"])]


def test_samples_carry_messages_violations_and_viewer_columns(exported: tuple[Any, dict[str, Any]]) -> None:
    done, _ = exported
    path = next(p for p in done.logs if "prompt_only_answer" in p.name)
    log = log_api.read_eval_log(str(path))
    sample = log.samples[0]
    assert [m.role for m in sample.messages] == ["user", "assistant"]
    assert sample.messages[-1].text == sample.output.completion
    assert sample.metadata["arm"] == "prompt_only" and sample.metadata["contract"] == "answer"
    invalid = [s for s in log.samples if s.scores["valid"].value == 0.0 and s.metadata["violations"]]
    assert invalid and all({"keyword", "schema_path", "instance_path"} <= set(v)
                           for s in invalid for v in s.metadata["violations"])
    columns = [c.id for c in log.eval.viewer.task_samples_view.columns]
    assert "score__valid__valid" in columns and "score__wrong_but_valid__wrong_but_valid" in columns
    assert log.eval.viewer.trust_content is False  # model output shown as plain text


def test_json_logs_read_back_the_same(tmp_path: Path, exported: tuple[Any, dict[str, Any]]) -> None:
    source = tmp_path / "o.jsonl"
    source.write_text('{"item_id": "gsm8k_test_0", "text": "{\\"answer\\": 18}"}\n'
                      '{"item_id": "gsm8k_test_1", "text": "{\\"answer\\": 1}"}\n', encoding="utf-8")
    from conformbench.importers.outputs import import_outputs

    summary = import_outputs(source, "gsm8k", tmp_path / "imp", contract="answer")
    done = export_inspect([summary.replay], tmp_path / "logs", log_format="json")
    (path,) = done.logs
    assert path.suffix == ".json"
    log = log_api.read_eval_log(str(path))
    assert [s.scores["correct"].value for s in log.samples] == [1.0, 0.0]
    assert [s.scores["wrong_but_valid"].value for s in log.samples] == [0.0, 1.0]


def test_a_sampled_run_exports_its_samples_as_epochs(tmp_path: Path) -> None:
    """K = 2 samples per item: each log holds every item twice, epochs 1
    and 2 (sample s is epoch s + 1), its prompt found for each; the rates
    stay report.json's over sample 0 and say so."""
    import runfakes

    from conformbench.runner.run import execute
    from conformbench.runner.spec import parse_spec

    data = runfakes.fake_spec(tmp_path / "run", n=3, arms=["prompt_only", "constrained"])
    data["decoding"] |= {"samples": 2, "temperature": 0.8, "seed": 1}
    execute(parse_spec(data))
    done = export_inspect([tmp_path / "run" / "replay.jsonl"], tmp_path / "logs")
    assert done.samples == 2 * 2 * 3
    for path in done.logs:
        log = log_api.read_eval_log(str(path))
        assert sorted((s.id, s.epoch) for s in log.samples) == sorted(
            (f"q{i}", e) for i in range(3) for e in (1, 2))
        assert log.eval.config.epochs == 2 and log.eval.dataset.samples == 3
        assert log.results.total_samples == 6
        assert all(s.messages[0].text for s in log.samples)  # the prompt of each sample, epoch 2's too
        for score in log.results.scores:
            assert score.scored_samples == 3 and score.metadata == {"over": "epoch 1 (sample 0) of 2, as report.json's rates"}


def test_a_repair_sample_holds_every_rounds_messages(tmp_path: Path) -> None:
    """A multi-round arm's sample is its last round: a repair's messages
    are the whole conversation (each answer, each validator turn), and the
    earlier rounds are in its metadata as they were asked."""
    import runfakes

    from conformbench.runner.run import execute
    from conformbench.runner.spec import parse_spec

    execute(parse_spec(runfakes.fake_spec(tmp_path / "run", n=3, arms=["prompt_only", "repair"])))
    done = export_inspect([tmp_path / "run" / "replay.jsonl"], tmp_path / "logs")
    (path,) = [p for p in done.logs if "repair" in p.name]
    samples = {s.id: s for s in log_api.read_eval_log(str(path)).samples}
    repaired = samples["q1"]  # "answer: 5" re-asked once
    assert [m.role for m in repaired.messages] == ["user", "assistant", "user", "assistant"]
    assert repaired.messages[1].text == "answer: 5" and "The validator reports" in repaired.messages[2].text
    assert repaired.metadata["round"] == 1
    (earlier,) = repaired.metadata["earlier_rounds"]
    assert earlier["text"] == "answer: 5" and earlier["valid"] is False and len(earlier["messages"]) == 1
    assert samples["q0"].metadata["round"] == 0 and samples["q0"].metadata["earlier_rounds"] == []
