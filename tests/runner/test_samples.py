"""K samples per item and condition (``[decoding] samples``): the units and
their seeds, the records (sample 0 written as before samples existed),
resume and growth per sample, two-turn reuse within a sample, the refusals,
and the sampling section of the report."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import runfakes

from conformbench.backends.base import backends
from conformbench.errors import UsageError
from conformbench.records.generation import GenerationRequest, GenerationResult
from conformbench.records.replay_file import read_replay
from conformbench.reports.rescore import score_replays
from conformbench.runner.run import build_plans, execute
from conformbench.runner.spec import parse_spec
from conformbench.runner.units import final_request


class SeededBackend(runfakes.FakeBackend):
    """The fake model, but an odd seed turns a right answer wrong (so the
    samples of one item differ, as a sampler's would)."""

    def generate(self, request: GenerationRequest) -> GenerationResult:
        result = super().generate(request)
        if request.settings.seed % 2 and request.constraint is not None:
            return replace(result, text='{"answer": -1}')
        return result


if "fake-seeded" not in backends:
    backends.register("fake-seeded")(SeededBackend)


@pytest.fixture(autouse=True)
def _clear_calls() -> None:
    runfakes.CALLS.clear()


def _spec(out: Path, samples: int = 3, temperature: float = 0.8, **task: Any) -> dict[str, Any]:
    data = runfakes.fake_spec(out, model={"backend": "fake-seeded"}, **task)
    data["decoding"] |= {"samples": samples, "temperature": temperature, "seed": 10}
    return data


def test_units_run_item_by_item_with_each_sample_seeded(tmp_path: Path) -> None:
    spec = parse_spec(_spec(tmp_path, n=2, arms=["prompt_only", "constrained"]))
    (plan,) = build_plans(spec)
    units = plan.units("m")
    assert [(u.item.id, u.sample, u.condition.arm) for u in units[:6]] == [
        ("q0", s, arm) for s in range(3) for arm in ("prompt_only", "constrained")]
    assert units[0].key == ("fake-qa", "m", "q0", "prompt_only[answer]")
    assert units[2].key == ("fake-qa", "m", "q0", "prompt_only[answer]#sample=1")
    assert len({u.key for u in units}) == len(units) == 12
    assert [final_request(plan, u, None).settings.seed for u in units[:6]] == [10, 10, 11, 11, 12, 12]


def test_sample_zero_is_recorded_as_before_and_later_samples_say_which(tmp_path: Path) -> None:
    execute(parse_spec(_spec(tmp_path, n=2, arms=["prompt_only", "constrained"])))
    lines = [json.loads(line) for line in (tmp_path / "replay.jsonl").read_text().splitlines()]
    gens = [g for g in lines if g["kind"] == "generation"]
    assert len(gens) == 12
    first = [g for g in gens if "sample" not in g]
    assert len(first) == 4 and all("seed" not in g for g in first)
    assert sorted((g["sample"], g["seed"]) for g in gens if "sample" in g) == [(1, 11)] * 4 + [(2, 12)] * 4
    assert lines[0]["spec"]["decoding"]["samples"] == 3


def test_two_turn_arms_reuse_the_free_text_of_their_own_sample(tmp_path: Path) -> None:
    execute(parse_spec(_spec(tmp_path, n=1, samples=2, arms=["unconstrained", "reason_then_constrain"])))
    replay = read_replay(tmp_path / "replay.jsonl")
    assert len(replay.generations) == 4 and len(runfakes.CALLS.requests) == 4
    free = {g.sample: g.text for g in replay.generations if g.condition.arm == "unconstrained"}
    assert {g.sample: g.free_text for g in replay.generations if g.free_text is not None} == free


def test_resume_and_growth_work_per_sample(tmp_path: Path) -> None:
    execute(parse_spec(_spec(tmp_path, n=2, samples=2, arms=["constrained"])))
    assert len(runfakes.CALLS.requests) == 4
    runfakes.CALLS.clear()
    again = execute(parse_spec(_spec(tmp_path, n=2, samples=2, arms=["constrained"])))
    assert again.generated == 0 and again.skipped == 4 and not runfakes.CALLS.requests
    grown = execute(parse_spec(_spec(tmp_path, n=2, samples=3, arms=["constrained"])))
    assert grown.generated == 2 and grown.skipped == 4
    assert [r.settings.seed for r in runfakes.CALLS.requests] == [12, 12]
    assert "samples 2 -> 3" in grown.growth_notes
    replay = read_replay(tmp_path / "replay.jsonl")
    assert sorted(g.sample for g in replay.generations) == [0, 0, 1, 1, 2, 2]
    assert replay.header.grown and replay.header.spec.decoding.samples == 3
    with pytest.raises(UsageError, match="different spec"):
        execute(parse_spec(_spec(tmp_path, n=2, samples=2, arms=["constrained"])))


def test_one_sample_is_recorded_as_one(tmp_path: Path) -> None:
    assert parse_spec(runfakes.fake_spec(tmp_path)).replay_dict()["decoding"]["samples"] == 1
    assert parse_spec(_spec(tmp_path, samples=1)).replay_spec().decoding.samples == 1


@pytest.mark.parametrize(("decoding", "message"), [
    ({"samples": 3, "temperature": 0.0}, r"^--samples 3 at temperature 0 would give 3 identical"),
    ({"samples": 2, "temperature": 0.0, "beams": 2}, r"^--samples 2 cannot run with --beams 2"),
    ({"samples": 0, "temperature": 0.8}, r"decoding\.samples"),
    ({"samples": 3, "temperature": 0.8, "sampels": 2}, r"unknown key 'sampels'.*samples"),
])
def test_refusals_are_one_line(tmp_path: Path, decoding: dict[str, Any], message: str) -> None:
    data = runfakes.fake_spec(tmp_path)
    data["decoding"] |= decoding
    with pytest.raises(UsageError, match=message) as caught:
        parse_spec(data)
    assert "\n" not in str(caught.value)


def test_the_report_has_a_sampling_section_only_with_samples(tmp_path: Path) -> None:
    execute(parse_spec(_spec(tmp_path / "k3", n=4, arms=["prompt_only", "constrained"])))
    result = score_replays([tmp_path / "k3" / "replay.jsonl"]).results[0]
    assert result.n == 4 and all(a.n == 4 for a in result.arms)  # every other metric: sample 0
    (section,) = [s for s in result.sections if s.name == "sampling"]
    assert section.data["samples"] == 3
    constrained = next(c for c in section.data["conditions"] if c["key"].startswith("constrained"))
    accuracy = next(m for m in constrained["metrics"] if m["metric"] == "accuracy")
    # even seeds (10, 12) keep the scripted answer (right for q0 and q2), seed 11 writes -1
    assert accuracy["pass_at"][-1]["rate"] == pytest.approx(0.5)
    assert accuracy["all_at"][-1]["rate"] == 0.0
    assert accuracy["agreement"]["rate"] == pytest.approx(0.5)
    execute(parse_spec(runfakes.fake_spec(tmp_path / "k1", n=4, arms=["prompt_only", "constrained"])))
    plain = score_replays([tmp_path / "k1" / "replay.jsonl"]).results[0]
    assert not [s for s in plain.sections if s.name == "sampling"]


def test_the_ledger_shows_every_sample(tmp_path: Path) -> None:
    """q0 under constrained: seeds 10 and 12 keep the right answer, seed 11
    writes -1; the ledger says so in report.md, report.html and ledger.csv
    (one CSV row per sample), and report.json reloads it."""
    from conformbench.reports.write import load_report, write_reports

    execute(parse_spec(_spec(tmp_path / "k3", n=2, arms=["prompt_only", "constrained"])))
    run = score_replays([tmp_path / "k3" / "replay.jsonl"])
    files = write_reports(run, tmp_path / "report")
    (result,) = run.results
    key = next(a.key for a in result.arms if a.key.startswith("constrained"))
    q0 = next(r for r in result.ledger if r.item_id == "q0")
    assert q0.states[key] == "valid/right"
    assert [s.state for s in q0.later_samples[key]] == ["valid/wrong", "valid/right"]
    cell = "valid/right; 3 samples: valid/right ×2, valid/wrong ×1"
    assert cell in files.markdown.read_text(encoding="utf-8")
    assert "3 samples: valid/right ×2, valid/wrong ×1" in files.html.read_text(encoding="utf-8")
    rows = files.ledger.read_text(encoding="utf-8").splitlines()
    assert [r.rsplit(",", 4)[1:] for r in rows if r.startswith(f"fake-qa,fake-model,q0,{key},")] == [
        ["valid/right", "no", "no", "0"], ["valid/wrong", "no", "no", "1"], ["valid/right", "no", "no", "2"]]
    assert len(rows) == 1 + 2 * 2 * 3
    assert load_report(files.json) == run


def test_the_openai_backend_sends_each_sample_its_temperature_and_seed(tmp_path: Path) -> None:
    from conformbench.records.generation import BackendConfig

    spec = parse_spec(_spec(tmp_path, n=1, arms=["prompt_only"]))
    (plan,) = build_plans(spec)
    http = backends.get("openai")(BackendConfig(model="m", base_url="http://127.0.0.1:9/v1"))
    bodies = [http.request_body(final_request(plan, u, None)) for u in plan.units("m")]
    assert [(b["temperature"], b["seed"]) for b in bodies] == [(0.8, 10), (0.8, 11), (0.8, 12)]


def test_sampled_numbers_gate_a_run(tmp_path: Path) -> None:
    import conformbench

    data = _spec(tmp_path, n=4, arms=["prompt_only", "constrained"])
    done = conformbench.run(data, fail_if=["pass_at_k_accuracy[constrained*] < 0.6"])
    assert done.exit_code == 1
    (check,) = done.checks
    assert check.value == pytest.approx(0.5)
    # --json carries them beside sample 0's rates
    (result,) = done.summary()["results"]
    sampled = result["section_metrics"]["sampling"]
    assert sampled[f"pass_at_k_accuracy[{check.label}]"] == pytest.approx(0.5)
    with pytest.raises(UsageError, match="pass_at_k_validity"):
        conformbench.run(data, fail_if=["pass_at_k_valdity[constrained*] < 0.6"])


def test_a_sampled_metric_n_a_for_a_matched_condition_is_not_evaluable(tmp_path: Path) -> None:
    """unconstrained has no validity over samples either: a gate matching
    it exits 2 naming it (it used to check the others alone and pass)."""
    import conformbench
    from conformbench.errors import GateNotEvaluableError

    data = _spec(tmp_path, n=2, arms=["unconstrained", "prompt_only"])
    with pytest.raises(GateNotEvaluableError, match=r"pass_at_k_validity is n/a for 1 of the 2 conditions it "
                       r"matches \(unconstrained: no sample of it has a validity verdict"):
        conformbench.run(data, fail_if=["pass_at_k_validity[*] > 2"])
    assert conformbench.score(tmp_path / "replay.jsonl", fail_if=["pass_at_k_validity[prompt*] > 2"]).exit_code == 0


class TogetherBackend(SeededBackend):
    """Decodes six requests in one step, as llamacpp with ``batched = 6``."""

    sequences_together = 6
    batches: list[int] = []

    def generate_many(self, requests: list[GenerationRequest]) -> list[GenerationResult]:
        TogetherBackend.batches.append(len(requests))
        return super().generate_many(requests)


if "fake-together" not in backends:
    backends.register("fake-together")(TogetherBackend)


def test_a_backend_that_decodes_together_gets_all_samples_of_an_item_at_once(tmp_path: Path) -> None:
    """The default concurrency (4) would split an item's 3 samples x 2 arms."""
    data = _spec(tmp_path, n=2, arms=["prompt_only", "constrained"])
    data["models"][0]["backend"] = "fake-together"
    TogetherBackend.batches = []
    execute(parse_spec(data))
    assert TogetherBackend.batches == [6, 6]
    assert len(read_replay(tmp_path / "replay.jsonl").generations) == 12
