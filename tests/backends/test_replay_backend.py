from __future__ import annotations

import json

import pytest

from conformbench.backends.base import backends
from conformbench.errors import UnsupportedSchemaError, UsageError
from conformbench.records.generation import (
    BackendConfig,
    Constraint,
    DecodingSettings,
    GenerationRequest,
    GenerationResult,
)
from conformbench.records.items import Condition
from conformbench.records.prompt import Message, Prompt
from conformbench.records.replay import GenerationRecord, ModelRecord, ReplayHeader

#: the smallest header spec a replay reads
SPEC = {"models": [{"label": "m"}], "tasks": [{"name": "t"}]}
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def prompt(text: str) -> Prompt:
    return Prompt((Message("system", "Be brief."), Message("user", text)))


def record(p: Prompt, result: GenerationResult, engine: str | None, model: str = "smol",
           item: str = "i1", **extra: object) -> GenerationRecord:
    arm = "constrained" if engine else "prompt_only"
    return GenerationRecord(
        task="t", model=model, item_id=item, condition=Condition(arm=arm, contract="city", engine=engine),
        prompt=p, text=result.text, finish_reason=result.finish_reason, prompt_tokens=result.prompt_tokens,
        completion_tokens=result.completion_tokens, seconds=result.seconds,
        compile_seconds=result.compile_seconds, engine_input=result.engine_input, **extra,  # type: ignore[arg-type]
    )


def write_replay(path, records, labels=("smol",), canary=None) -> str:
    lines = [ReplayHeader(run_id="r", created="2026-01-01", conformbench_version="0", spec=SPEC)]
    lines += [ModelRecord(label=name, backend="llamacpp", metadata={"model_sha256": "abc" + name}, canary=canary or {})
              for name in labels]
    lines += records
    path.write_text("".join(r.model_dump_json() + "\n" for r in lines), encoding="utf-8")
    return str(path)


def replay(path: str, **extra: object):
    return backends.get("replay")(BackendConfig(model=path, extra=extra))


@pytest.mark.slow
def test_replay_serves_a_live_run_without_the_model(llama_backend, tmp_path):
    live_requests = [
        GenerationRequest(prompt("Capital of Peru?"), DecodingSettings(max_tokens=24)),
        GenerationRequest(prompt("Capital of Peru?"), DecodingSettings(max_tokens=24), Constraint(SCHEMA, "llguidance")),
    ]
    live = llama_backend.generate_many(live_requests)
    records = [record(r.prompt, res, r.constraint.engine if r.constraint else None)
               for r, res in zip(live_requests, live)]
    served = replay(write_replay(tmp_path / "run.jsonl", records)).generate_many(live_requests)
    assert [s.text for s in served] == [r.text for r in live]
    assert served[1].engine_input == live[1].engine_input and served[0].engine_input is None
    assert served[1].completion_tokens == live[1].completion_tokens


def test_same_prompt_is_served_in_recorded_order_then_repeats(tmp_path):
    p = prompt("x")
    recs = [record(p, GenerationResult("first", "stop"), None, item="i1"),
            record(p, GenerationResult("second", "length"), None, item="i2")]
    backend = replay(write_replay(tmp_path / "r.jsonl", recs))
    texts = [backend.generate(GenerationRequest(p)).text for _ in range(3)]
    assert texts == ["first", "second", "second"]


def test_a_retried_generation_serves_the_try_scoring_keeps(tmp_path):
    """A resumed run appends a retry of a failed generation under the same
    key: the backend serves the retry, as the scorer reads it, not the error."""
    p = prompt("x")
    recs = [record(p, GenerationResult("", "error", error="server gone"), None),
            record(p, GenerationResult("answer", "stop"), None)]
    backend = replay(write_replay(tmp_path / "r.jsonl", recs))
    assert [backend.generate(GenerationRequest(p)).text for _ in range(2)] == ["answer", "answer"]


def test_the_header_is_checked_as_scoring_checks_it(tmp_path):
    headless = tmp_path / "headless.jsonl"
    headless.write_text(record(prompt("x"), GenerationResult("a", "stop"), None).model_dump_json() + "\n")
    with pytest.raises(UsageError, match="no header line"):
        replay(str(headless))
    future = tmp_path / "future.jsonl"
    header = ReplayHeader(run_id="r", created="c", conformbench_version="0", spec=SPEC)
    future.write_text(header.model_dump_json().replace('"version":3', '"version":9') + "\n")
    with pytest.raises(UsageError, match=r"replay format 9 is newer than this conformbench reads \(3\)"):
        replay(str(future))


def test_missing_recording_is_an_error_result(tmp_path):
    backend = replay(write_replay(tmp_path / "r.jsonl", [record(prompt("x"), GenerationResult("a", "stop"), None)]))
    constrained = backend.generate(GenerationRequest(prompt("x"), constraint=Constraint(SCHEMA, "gbnf")))
    assert constrained.finish_reason == "error" and "no generation recorded" in (constrained.error or "")
    assert backend.metadata()["misses"] == 1


def test_excluded_items_raise_unsupported_again(tmp_path):
    rec = record(prompt("x"), GenerationResult("", "stop"), "llguidance").model_copy(
        update={"finish_reason": "excluded", "excluded": "llguidance cannot compile the schema: uniqueItems"})
    backend = replay(write_replay(tmp_path / "r.jsonl", [rec]))
    with pytest.raises(UnsupportedSchemaError) as info:
        backend.generate(GenerationRequest(prompt("x"), constraint=Constraint(SCHEMA, "llguidance")))
    assert str(info.value) == "llguidance cannot compile the schema: uniqueItems"


def test_labels_select_a_model(tmp_path):
    recs = [record(prompt("x"), GenerationResult("from a", "stop"), None, model="a"),
            record(prompt("x"), GenerationResult("from b", "stop"), None, model="b")]
    path = write_replay(tmp_path / "r.jsonl", recs, labels=("a", "b"))
    with pytest.raises(UsageError, match="several models"):
        replay(path)
    with pytest.raises(UsageError, match="no model 'c'"):
        replay(path, label="c")
    backend = replay(path, label="b")
    assert backend.generate(GenerationRequest(prompt("x"))).text == "from b"
    meta = backend.metadata()
    assert meta["model_sha256"] == "abcb" and meta["backend"] == "replay" and meta["recorded_backend"] == "llamacpp"


def test_malformed_replay_files_are_one_line_usage_errors(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"kind": "header", "run_id": "r", "created": "c", "conformbench_version": "0",
                                "spec": SPEC}) + "\n"
                    "{not json\n", encoding="utf-8")
    with pytest.raises(UsageError, match=r"bad.jsonl:2: not a JSON line; the replay is damaged"):
        replay(str(path))
    with pytest.raises(UsageError, match="cannot read .*absent.jsonl"):
        replay(str(tmp_path / "absent.jsonl"))
    with pytest.raises(UsageError, match="unknown option"):
        replay(str(path), lable="x")


@pytest.mark.slow
def test_a_replayed_run_passes_the_canary_it_passed_live(llama_backend, tmp_path):
    from conformbench.audits.canary import check_canary
    from conformbench.errors import CanaryFailedError

    verdict = check_canary(llama_backend, "llguidance", rng_seed=5).as_record()
    backend = replay(write_replay(tmp_path / "r.jsonl", [], canary={"llguidance": verdict}))
    assert check_canary(backend, "llguidance", rng_seed=5).text == verdict["text"]
    with pytest.raises(CanaryFailedError):  # another constant was never recorded
        check_canary(backend, "llguidance", rng_seed=6)
    with pytest.raises(CanaryFailedError):
        check_canary(backend, "gbnf", rng_seed=5)


def test_canaries_of_every_answer_form_are_served_from_every_model_record(tmp_path):
    """A run resumed to add YAML/XML cells writes a second model record with
    the new forms' canaries: a replay of the whole run passes all of them."""
    from conformbench.audits.canary import canary_constant, check_canary
    from conformbench.errors import CanaryFailedError

    constant = canary_constant(5)
    texts = {"llguidance": f'{{"canary": "{constant}"}}', "llguidance/yaml": f"canary: {constant}\n",
             "llguidance/xml": f"<root>\n  <canary>{constant}</canary>\n</root>\n"}
    lines = [ReplayHeader(run_id="r", created="2026-01-01", conformbench_version="0", spec=SPEC)]
    first = {"llguidance": {"passed": True, "constant": constant, "text": texts["llguidance"]}}
    later = {k: {"passed": True, "constant": constant, "text": t} for k, t in texts.items() if "/" in k}
    lines += [ModelRecord(label="smol", backend="llamacpp", metadata={}, canary=c) for c in (first, later)]
    path = tmp_path / "r.jsonl"
    path.write_text("".join(r.model_dump_json() + "\n" for r in lines), encoding="utf-8")
    backend = replay(str(path))
    for form in ("json", "yaml", "xml"):
        result = check_canary(backend, "llguidance", 5, form)
        assert result.text == texts[result.label] and result.output_format == form
    with pytest.raises(CanaryFailedError, match=r"engine 'gbnf' \(yaml answers\)"):
        check_canary(backend, "gbnf", 5, "yaml")
