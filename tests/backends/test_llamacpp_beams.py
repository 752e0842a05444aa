"""Beam search in the llamacpp backend (beams.py): HF's hypothesis rules,
the refusals, and the live model (beams differ from greedy, beams = 1 is
greedy, llguidance stays valid and the canary passes under beams)."""

from __future__ import annotations

import json

import jsonschema
import pytest

from conformbench.audits.canary import check_canary
from conformbench.backends.llamacpp.beam_rules import STOP_RULES, split_step, stop_now
from conformbench.backends.llamacpp.beams import Hypotheses, beams_refusal, stop_rule_option
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


EOS = 2


def _kept(*scores: float) -> Hypotheses:
    hyps = Hypotheses(len(scores))
    for i, score in enumerate(scores):
        hyps.add([i], score, 1, "stop")
    return hyps


def test_the_two_stop_rules_disagree_when_a_finished_candidate_outscores_the_running_beams():
    """A hand-built step at generated length 4, 2 beams, kept hypotheses
    -0.5 and -1.0: the best candidate ends the sequence (-2.0 / 4 = -0.5,
    it could still beat -1.0), the best running beam is at -4.4 / 4 = -1.1
    (it cannot). The old scorer searches on; transformers stops."""
    hyps = _kept(-0.5, -1.0)
    cands = [(0, EOS, -2.0), (1, 7, -4.4), (0, 8, -4.6), (1, 9, -5.0)]
    finished, running = split_step("transformers", cands, 2, lambda t: t == EOS, lambda c: None)
    assert [c for c, _ in finished] == [(0, EOS, -2.0)] and running == [(1, 7, -4.4), (0, 8, -4.6)]
    assert stop_now("transformers", hyps, cands, running, 4)
    assert not stop_now("beam-search-scorer", hyps, cands, running, 4)
    # with a running beam able to win both rules search on
    assert not stop_now("transformers", hyps, cands, [(1, 7, -3.6)], 4)


@pytest.mark.long
def test_the_transformers_rule_is_transformers_own_heuristic():
    """stop_now("transformers") against the installed transformers'
    _check_early_stop_heuristic on the same numbers (its cur_len counts the
    prompt: 10 prompt tokens + 4 generated)."""
    torch = pytest.importorskip("torch")
    from transformers.generation.utils import GenerationMixin

    check = GenerationMixin._check_early_stop_heuristic
    for kept, best_running in (((-0.5, -1.0), -4.4), ((-0.5, -1.0), -3.6), ((-0.5, -1.0), -4.0), ((-0.5,), -9.0)):
        hyps = _kept(*kept)
        scores = list(kept) + [-1.0e9] * (2 - len(kept))
        unsatisfied = check(
            is_early_stop_heuristic_unsatisfied=torch.ones((1, 1), dtype=torch.bool),
            running_beam_scores=torch.tensor([[best_running, best_running - 1]]),
            beam_scores=torch.tensor([scores]), is_sent_finished=torch.tensor([[s > -1.0e9 for s in scores]]),
            cur_len=14, max_length=100, decoder_prompt_len=10, early_stopping=False, length_penalty=1.0)
        hyps.beams = 2
        ours = stop_now("transformers", hyps, [(0, 5, best_running)], [(0, 5, best_running)], 4)
        assert ours == (not bool(unsatisfied.item())), (kept, best_running)


def test_stop_rules_end_a_candidate_only_among_the_first_n_under_transformers():
    """A stop string (or the budget, the loop stop) met by a candidate
    finishes it if it ranks among the first N and never lets it run on;
    the old scorer leaves it to end the running beam later."""
    cands = [(0, 5, -1.0), (0, 6, -1.5), (1, 7, -2.0), (1, 8, -2.5)]

    def hit(cand: tuple[int, int, float]) -> str | None:
        return "stop" if cand[1] in (5, 7) else None

    finished, running = split_step("transformers", cands, 2, lambda t: t == EOS, hit)
    assert finished == [((0, 5, -1.0), "stop")] and running == [(0, 6, -1.5), (1, 8, -2.5)]
    finished, running = split_step("beam-search-scorer", cands, 2, lambda t: t == EOS, hit)
    assert finished == [] and running == [(0, 5, -1.0), (0, 6, -1.5)]


def test_the_stop_rule_is_a_named_option():
    assert set(STOP_RULES) == {"transformers", "beam-search-scorer"}
    assert stop_rule_option("beam-search-scorer") == "beam-search-scorer"
    with pytest.raises(UsageError, match="beam_stop must be one of"):
        stop_rule_option("hf4")


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
    assert parse_spec(_spec("llamacpp")).replay_dict()["decoding"]["beams"] == 1
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


@pytest.mark.long
@pytest.mark.slow
def test_beams_differ_from_greedy_and_one_beam_is_greedy(llama_backend):
    greedy = [llama_backend.generate(_request(q, 1)) for q in QUESTIONS]
    one = [llama_backend.generate(_request(q, 1)) for q in QUESTIONS]
    assert llama_backend.instruments.beams is None  # beams = 1 never entered the beam search
    assert [r.text for r in one] == [r.text for r in greedy] and all(r.beams == 1 for r in one)
    three = [llama_backend.generate(_request(q, 3)) for q in QUESTIONS]
    assert all(r.beams == 3 and r.error is None and r.text for r in three)
    assert any(b.text != g.text for b, g in zip(three, greedy, strict=True))


@pytest.mark.long
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
