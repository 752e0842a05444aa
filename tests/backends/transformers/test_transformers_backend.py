"""The transformers backend on the embedded SmolLM2 GGUF (dequantised by
transformers, fp32, one thread): greedy generation, the same prompt tokens
as llama.cpp, each engine's output valid and its canary passed, beam search
under a constraint, attention through eager attention, gbnf refused, and a
run that resumes. Skipped where the [hf] extra is not installed."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest

from conformbench.audits.canary import check_canary
from conformbench.backends.base import Backend, backends
from conformbench.backends.transformers.loading import missing_extra
from conformbench.errors import UsageError
from conformbench.records.generation import BackendConfig, Constraint, DecodingSettings, GenerationRequest
from conformbench.records.prompt import Message, Prompt

MISSING = missing_extra()
pytestmark = [
    pytest.mark.slow,
    pytest.mark.long,
    pytest.mark.timeout(1800),
    pytest.mark.skipif(MISSING is not None, reason=f"the [hf] extra is not installed: {MISSING}"),
]
HAVE_XGRAMMAR = importlib.util.find_spec("xgrammar") is not None
ENGINES = [
    "llguidance",
    pytest.param("xgrammar", marks=pytest.mark.skipif(
        not HAVE_XGRAMMAR, reason="xgrammar is not installed (pip install apache-tvm-ffi, then "
                                  "pip install --no-deps xgrammar)")),
    "outlines",
]
SCHEMA = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 12},
                                           "age": {"type": "integer", "minimum": 0}},
          "required": ["name", "age"], "additionalProperties": False}
QUESTION = "Write a JSON object for a person with a name and an age."


@pytest.fixture(scope="module")
def hf_backend() -> Iterator[Backend]:
    backend = backends.create("transformers", BackendConfig(threads=1, extra={"dtype": "fp32"}))
    yield backend
    backend.close()


def _request(question: str, beams: int = 1, constraint: Constraint | None = None,
             max_tokens: int = 40) -> GenerationRequest:
    return GenerationRequest(Prompt((Message("user", question),)),
                             DecodingSettings(max_tokens=max_tokens, beams=beams), constraint)


def test_greedy_is_deterministic_and_reads_like_llamacpp(hf_backend, llama_backend) -> None:
    request = _request("What is 6 times 7? Answer in one short sentence.")
    first, again = hf_backend.generate(request), hf_backend.generate(request)
    assert first.text and first.text == again.text and first.error is None
    assert first.finish_reason == "stop" and 0 < first.completion_tokens < 40
    # the GGUF's chat template and tokenizer: the prompt tokens are llama.cpp's
    assert hf_backend.tokenize_prompt(request.prompt) == llama_backend.tokenize_prompt(request.prompt)
    assert first.prompt_tokens == len(llama_backend.tokenize_prompt(request.prompt))
    cut = hf_backend.generate(_request("Count from 1 to 100, one number per line.", max_tokens=8))
    assert cut.finish_reason == "length" and cut.completion_tokens == 8


def test_token_pieces_are_llamacpps(hf_backend, llama_backend) -> None:
    ours, theirs = hf_backend.vocabulary.token_pieces, llama_backend.vocabulary.token_pieces
    assert len(ours) == len(theirs) == hf_backend.vocabulary.n_vocab
    differ = [i for i, (a, b) in enumerate(zip(ours, theirs)) if a is not None and b is not None and a != b]
    assert differ == []
    assert hf_backend.vocabulary.eos == llama_backend.vocabulary.eos
    assert hf_backend.vocabulary.eog_ids <= llama_backend.vocabulary.eog_ids | {0}


def test_the_model_record(hf_backend, smollm_path: Path) -> None:
    meta = hf_backend.metadata()
    assert meta["backend"] == "transformers" and meta["dtype"] == "float32" and meta["device"] == "cpu"
    assert meta["checkpoint_kind"] == "gguf" and len(meta["model_sha256"]) == 64
    # the file's name and hash, never the path (a home directory in a shared replay)
    assert meta["model_file"] == smollm_path.name and "model_path" not in meta and meta["threads"] == 1
    for dist in ("torch", "transformers", "accelerate", "gguf"):
        assert meta["versions"][dist], dist
    assert meta["chat_template"] == "tokenizer" and meta["loop_stop"]["supported"]


@pytest.mark.parametrize("engine", ENGINES)
def test_each_engine_gives_valid_output_and_passes_the_canary(hf_backend, engine: str) -> None:
    result = hf_backend.generate(_request(QUESTION, constraint=Constraint(SCHEMA, engine), max_tokens=60))
    assert result.finish_reason == "stop" and result.error is None, result
    jsonschema.validate(json.loads(result.text), SCHEMA)
    assert result.engine_input
    verdict = check_canary(hf_backend, engine, 3)
    assert verdict.finish_reason == "stop" and json.loads(verdict.text) == {"canary": verdict.constant}


def test_the_yaml_and_xml_answer_grammars_through_llguidance(hf_backend) -> None:
    for form in ("yaml", "xml"):
        verdict = check_canary(hf_backend, "llguidance", 4, output_format=form)
        assert verdict.label == f"llguidance/{form}" and verdict.constant in verdict.text


def test_sampling_is_seeded(hf_backend) -> None:
    def sample(seed: int) -> str:
        settings = DecodingSettings(max_tokens=24, temperature=0.9, seed=seed)
        return hf_backend.generate(GenerationRequest(Prompt((Message("user", "Tell me a story."),)), settings)).text

    first = sample(1)
    assert first and sample(1) == first
    assert any(sample(seed) != first for seed in (2, 3, 4))


@pytest.mark.parametrize("engine", ENGINES)
def test_beams_under_a_constraint_stay_valid(hf_backend, engine: str) -> None:
    result = hf_backend.generate(_request(QUESTION, beams=3, constraint=Constraint(SCHEMA, engine),
                                          max_tokens=60))
    assert result.beams == 3 and result.finish_reason == "stop" and result.error is None, result
    jsonschema.validate(json.loads(result.text), SCHEMA)
    assert check_canary(hf_backend, engine, 5, beams=3).finish_reason == "stop"


def test_beams_search_differently_from_greedy(hf_backend) -> None:
    questions = [QUESTION, "Name three colours, comma separated.", "Say hello in French."]
    greedy = [hf_backend.generate(_request(q)).text for q in questions]
    three = [hf_backend.generate(_request(q, beams=3)) for q in questions]
    assert all(r.beams == 3 and r.text and r.error is None for r in three)
    assert any(r.text != g for r, g in zip(three, greedy, strict=True))
    assert hf_backend.metadata()["beam_generations"] >= 3


def test_attention_masses_add_up(hf_backend) -> None:
    text = json.dumps(SCHEMA, indent=2)
    prompt = Prompt((Message("user", f"Is this valid?\n{text}\nAnswer yes or no."),))
    result = hf_backend.generate(GenerationRequest(prompt, DecodingSettings(max_tokens=2, attention=True),
                                                   attend=text))
    record = result.attention
    assert record is not None and record.layers == 30 and record.keys == result.prompt_tokens
    first, end = record.schema_tokens
    assert 0 < first < end <= record.keys
    for layer in range(record.layers):
        share = record.schema_share[layer]
        assert 0.0 < share <= 1.0 + 1e-6
        assert abs(sum(record.bme[layer]) - share) < 1e-4 and abs(sum(record.profile[layer]) - share) < 1e-4
    assert hf_backend.metadata()["attn_implementation"] != "eager"  # switched back after the probe


def test_gbnf_is_refused_with_the_reason(hf_backend) -> None:
    with pytest.raises(UsageError, match="llama.cpp's sampler"):
        hf_backend.generate(_request(QUESTION, constraint=Constraint(SCHEMA, "gbnf")))


def test_a_run_resumes_without_regenerating(tmp_path: Path) -> None:
    import conformbench

    spec = {"models": [{"label": "smol-hf", "backend": "transformers", "threads": 1, "extra": {"dtype": "fp32"}}],
            "tasks": [{"name": "gsm8k", "n": 1, "arms": ["constrained"], "engines": ["llguidance"],
                       "json_tokens": 96}],
            "out": str(tmp_path / "run")}
    first = conformbench.run(spec, quiet=True)
    replay = tmp_path / "run" / "replay.jsonl"
    made = _generations(replay)
    assert {g["item_id"] for g in made} == {"gsm8k_test_0"} and all(g["text"] for g in made)
    models = [json.loads(line) for line in replay.read_text().splitlines() if '"kind":"model"' in line]
    assert any(m.get("canary", {}).get("llguidance", {}).get("passed") for m in models)
    # run again with n = 2: the recorded generations are kept, only the new item is generated
    second = conformbench.run({**spec, "tasks": [{**spec["tasks"][0], "n": 2}]}, quiet=True)
    grown = _generations(replay)
    assert grown[: len(made)] == made
    assert {g["item_id"] for g in grown[len(made):]} == {"gsm8k_test_1"} and len(grown) == 2 * len(made)
    assert {a.n for a in first.run.results[0].arms} == {1}
    assert {a.n for a in second.run.results[0].arms} == {2}


def _generations(replay: Path) -> list[dict[str, object]]:
    records = [json.loads(line) for line in replay.read_text().splitlines()]
    return [r for r in records if r.get("kind") == "generation"]


def test_the_multi_round_arms_on_the_transformers_backend(tmp_path: Path) -> None:
    """repair, resample and fallback (issue #42) on the transformers backend:
    a short answer budget makes first answers fail, so later rounds are
    generated, each repair turn quoting what python-jsonschema reports."""
    from test_policies_model import check_repair_turns

    from conformbench.cli.main import main
    from conformbench.records.replay_file import read_replay

    out = tmp_path / "out"
    code = main(["run", "--backend", "transformers", "--task", "gsm8k", "-n", "1", "--json-tokens", "24",
                 "--max-rounds", "2", "--threads", "1", "--engine", "llguidance",
                 "--arm", "prompt_only[answer],repair[answer],resample[answer],fallback[answer]",
                 "--out", str(out), "--quiet"])
    assert code == 0
    gens = read_replay(out / "replay.jsonl").generations
    assert all(g.finish_reason != "error" for g in gens)
    later = {g.condition.arm for g in gens if g.round == 1}
    assert later == {"repair", "resample", "fallback"}  # 24 tokens cut every first answer
    assert check_repair_turns(gens) == 1
    fallback = next(g for g in gens if g.condition.arm == "fallback" and g.round == 1)
    assert fallback.grammar is None and fallback.condition.engine == "llguidance"  # None: under the grammar


def test_a_thinking_constraint_cuts_the_thinking_and_answers_under_the_grammar(hf_backend) -> None:
    """think_then_constrain's one call on transformers: at 16 thinking tokens
    the decoder writes the stop string itself, then a valid answer."""
    from conformbench.engines.thinking_grammar import split_thinking
    from conformbench.records.generation import Thinking

    thinking = Thinking("</think>", 16)
    result = hf_backend.generate(_request(
        "What is 6 times 7? Think first, then write </think> and the JSON object.",
        constraint=Constraint(SCHEMA, "llguidance", thinking=thinking), max_tokens=16 + 40))
    thought, answer = split_thinking(result.text, "</think>")
    assert answer is not None and result.finish_reason == "stop", result
    assert result.think_cut in (None, "budget", "loop")
    if result.think_cut == "budget":  # cut: the 16 tokens of thinking come first
        assert len(hf_backend.vocabulary.tokenize(thought)) >= 12
    jsonschema.validate(json.loads(answer), SCHEMA)
    toll = result.mask_toll  # the answer part: the steps after the stop string alone
    assert toll is not None and toll.answer is not None
    assert 0 < toll.answer.steps < toll.steps and toll.answer.min_share >= toll.min_share
