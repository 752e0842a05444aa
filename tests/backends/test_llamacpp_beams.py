"""Beam search in the llamacpp backend (beams.py): HF's hypothesis rules,
the refusals, and the live model (beams differ from greedy, beams = 1 is
greedy, llguidance stays valid and the canary passes under beams)."""

from __future__ import annotations

import json

import jsonschema
import pytest

from conformbench.audits.canary import check_canary
from conformbench.backends.llamacpp.beams import Hypotheses, beams_refusal
from conformbench.errors import UsageError
from conformbench.records.generation import Constraint, DecodingSettings, GenerationRequest
from conformbench.records.items import Condition
from conformbench.records.prompt import Message, Prompt
from conformbench.records.replay import GenerationRecord
from conformbench.runner.spec import parse_spec


def test_hypotheses_score_by_generated_length_and_keep_the_best_n():
    hyps = Hypotheses(2)
    hyps.add([1, 2], -3.0, 3, "stop")  # -1.0
    hyps.add([1], -1.0, 2, "stop")  # -0.5
    assert hyps.worst == -1.0
    hyps.add([7, 7, 7], -6.0, 4, "length")  # -1.5 < worst: not kept
    assert sorted(h.score for h in hyps.kept) == [-1.0, -0.5]
    hyps.add([9], -1.6, 2, "loop")  # -0.8 beats the worst, which goes
    assert sorted(h.score for h in hyps.kept) == [-0.8, -0.5] and hyps.worst == -0.8
    best = hyps.best()
    assert best is not None and best.tokens == [1] and best.finish == "stop"


def test_hypotheses_done_only_when_no_running_beam_can_beat_the_worst():
    hyps = Hypotheses(2)
    hyps.add([1], -2.0, 2, "stop")
    assert not hyps.is_done(-100.0, 5)  # fewer than N kept
    hyps.add([2], -2.0, 2, "stop")  # worst -1.0
    assert not hyps.is_done(-4.0, 5)  # -0.8 could still beat -1.0
    assert hyps.is_done(-6.0, 5)  # -1.2 cannot


def test_equal_scores_return_the_last_kept_as_hf_does():
    hyps = Hypotheses(3)
    hyps.add([1], -1.0, 1, "stop")
    hyps.add([2], -1.0, 1, "stop")
    best = hyps.best()
    assert best is not None and best.tokens == [2]


def test_refusals():
    assert beams_refusal(1, 0.7, "gbnf") is None
    assert "temperature" in (beams_refusal(3, 0.7, None) or "")
    assert "gbnf" in (beams_refusal(3, 0.0, "gbnf") or "")
    assert beams_refusal(3, 0.0, "llguidance") is None


def _spec(backend: str, **decoding: object) -> dict[str, object]:
    model = {"label": "m", "backend": backend}
    if backend == "openai":
        model["base_url"] = "http://127.0.0.1:9"
    return {"models": [model], "tasks": [{"name": "validation", "n": 2}], "decoding": decoding}


@pytest.mark.parametrize("backend", ["openai", "replay"])
def test_backends_that_cannot_are_refused_before_the_run(backend):
    for flag, decoding in (("--beams", {"beams": 3}), ("--attention", {"attention": True})):
        with pytest.raises(UsageError, match=f"{flag}: the {backend} backend cannot"):
            parse_spec(_spec(backend, **decoding))


def test_gbnf_and_sampling_refused_in_the_spec():
    spec = _spec("llamacpp", beams=3)
    spec["tasks"] = [{"name": "validation", "n": 2, "engines": ["gbnf"]}]
    with pytest.raises(UsageError, match="gbnf"):
        parse_spec(spec)
    with pytest.raises(UsageError, match="temperature"):
        parse_spec(_spec("llamacpp", beams=3, temperature=0.5))
    with pytest.raises(UsageError, match="does not say where its schema"):
        parse_spec({**_spec("llamacpp", attention=True), "tasks": [{"name": "gsm8k", "n": 2}]})


def test_greedy_records_keep_their_shape():
    assert "beams" not in parse_spec(_spec("llamacpp")).replay_dict()["decoding"]
    assert parse_spec(_spec("llamacpp", beams=3)).replay_dict()["decoding"]["beams"] == 3
    record = GenerationRecord(task="t", model="m", item_id="i", condition=Condition(arm="unconstrained"),
                              prompt=Prompt(messages=()))
    line = json.loads(record.model_dump_json())
    assert "beams" not in line and "attention" not in line
    assert json.loads(record.model_copy(update={"beams": 3}).model_dump_json())["beams"] == 3


SCHEMA = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 12},
                                           "age": {"type": "integer", "minimum": 0}},
          "required": ["name", "age"], "additionalProperties": False}
QUESTIONS = [
    "Write a JSON object for a person with a name and an age.",
    f"Write a JSON sample for this schema:\n{json.dumps(SCHEMA)}\nSample:",
    "Name three colours, comma separated.",
]


def _request(question: str, beams: int, constraint: Constraint | None = None) -> GenerationRequest:
    return GenerationRequest(Prompt((Message("user", question),)),
                             DecodingSettings(max_tokens=40, beams=beams), constraint)


@pytest.mark.slow
def test_beams_differ_from_greedy_and_one_beam_is_greedy(llama_backend):
    greedy = [llama_backend.generate(_request(q, 1)) for q in QUESTIONS]
    one = [llama_backend.generate(_request(q, 1)) for q in QUESTIONS]
    assert llama_backend.instruments.beams is None  # beams = 1 never entered the beam search
    assert [r.text for r in one] == [r.text for r in greedy] and all(r.beams == 1 for r in one)
    three = [llama_backend.generate(_request(q, 3)) for q in QUESTIONS]
    assert all(r.beams == 3 and r.error is None and r.text for r in three)
    assert any(b.text != g.text for b, g in zip(three, greedy, strict=True))


@pytest.mark.slow
def test_beams_under_llguidance_stay_valid_and_pass_the_canary(llama_backend):
    constraint = Constraint(SCHEMA, "llguidance")
    for question in QUESTIONS[:2]:
        result = llama_backend.generate(_request(question, 3, constraint))
        assert result.beams == 3 and result.finish_reason == "stop", result
        jsonschema.validate(json.loads(result.text), SCHEMA)
    verdict = check_canary(llama_backend, "llguidance", 0, beams=3)
    assert verdict.finish_reason == "stop"
    with pytest.raises(UsageError, match="gbnf"):
        llama_backend.generate(_request(QUESTIONS[0], 3, Constraint(SCHEMA, "gbnf")))
