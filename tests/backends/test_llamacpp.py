from __future__ import annotations

import json
import os

import pytest

from conformbench.backends.base import backends
from conformbench.errors import UnknownNameError, UsageError
from conformbench.files import file_sha256
from conformbench.records.generation import (
    BackendConfig,
    Constraint,
    DecodingSettings,
    GenerationRequest,
)
from conformbench.records.prompt import Message, Prompt

pytestmark = pytest.mark.slow

SYSTEM = Message("system", "You are a terse assistant. Answer in one short sentence about geography.")


def ask(question: str, **settings: object) -> GenerationRequest:
    return GenerationRequest(
        Prompt((SYSTEM, Message("user", question))),
        DecodingSettings(**{"max_tokens": 32, **settings}),  # type: ignore[arg-type]
    )


def test_unconstrained_generation(llama_backend):
    result = llama_backend.generate(ask("What is the capital of France?"))
    assert result.finish_reason in ("stop", "length")
    assert result.text.strip() and result.error is None
    assert 0 < result.completion_tokens <= 32
    assert result.prompt_tokens == len(llama_backend.tokenize_prompt(ask("What is the capital of France?").prompt))
    assert result.seconds > 0 and result.engine_input is None


@pytest.mark.long
def test_generation_does_not_depend_on_what_ran_before(llama_backend):
    question = ask("Name a river in Egypt.")
    first = llama_backend.generate(question)
    llama_backend.generate(ask("Name a river in Spain.", max_tokens=4))  # shares a prefix
    again = llama_backend.generate(question)  # fully cached prompt
    assert again.text == first.text
    fresh = backends.get("llamacpp")(BackendConfig(n_ctx=2048, threads=1))
    try:
        assert fresh.generate(question).text == first.text  # empty cache
    finally:
        fresh.close()


def test_chat_template_and_assistant_prefix_are_in_the_rendered_prompt(llama_backend):
    prompt = Prompt((Message("user", "Hi"),), assistant_prefix='{"answer": ')
    text = llama_backend.render_prompt(prompt)
    assert text.endswith('<|im_start|>assistant\n{"answer": ')
    assert "<|im_start|>user\nHi<|im_end|>" in text
    plain = llama_backend.render_prompt(Prompt((Message("user", "Hi"),)))
    assert text == plain + '{"answer": '
    # the prefix is prompt, not output: the model continues after it
    result = llama_backend.generate(GenerationRequest(prompt, DecodingSettings(max_tokens=8)))
    assert not result.text.startswith('{"answer"')


def test_max_tokens_truncates_with_finish_length(llama_backend):
    result = llama_backend.generate(ask("Describe the Alps in detail.", max_tokens=3))
    assert result.finish_reason == "length" and result.completion_tokens == 3


def test_stop_strings_cut_the_text(llama_backend):
    full = llama_backend.generate(ask("What is the capital of France?"))
    word = full.text.split()[1]
    cut = llama_backend.generate(ask("What is the capital of France?", stop=(word,)))
    assert cut.finish_reason == "stop"
    assert cut.text == full.text[: full.text.index(word)]


def test_kv_cache_reuse_counter_grows_on_a_shared_prefix(llama_backend):
    spain, italy = ask("What is the capital of Spain?", max_tokens=4), ask("What is the capital of Italy?", max_tokens=4)
    llama_backend.generate(spain)
    before = llama_backend.metadata()["prefix_tokens_reused"]
    llama_backend.generate(italy)
    reused = llama_backend.metadata()["prefix_tokens_reused"] - before
    a, b = llama_backend.tokenize_prompt(spain.prompt), llama_backend.tokenize_prompt(italy.prompt)
    common = next(i for i, (x, y) in enumerate(zip(a, b)) if x != y)
    assert reused == common > 20  # the system prompt and the question's start


def test_prefix_reuse_off_evaluates_every_prompt_whole_with_the_same_output(llama_backend):
    spain, italy = ask("What is the capital of Spain?", max_tokens=8), ask("What is the capital of Italy?", max_tokens=8)
    want = [llama_backend.generate(spain).text, llama_backend.generate(italy).text]
    off = backends.get("llamacpp")(BackendConfig(n_ctx=2048, threads=1, extra={"prefix_reuse": False}))
    try:
        assert [off.generate(spain).text, off.generate(italy).text] == want
        meta = off.metadata()
        assert meta["prefix_reuse"] is False and meta["prefix_tokens_reused"] == 0
        assert meta["prompt_tokens_total"] == len(off.tokenize_prompt(spain.prompt)) + len(
            off.tokenize_prompt(italy.prompt))
    finally:
        off.close()
    assert llama_backend.metadata()["prefix_reuse"] is True
    with pytest.raises(UsageError, match="prefix_reuse must be true or false"):
        backends.get("llamacpp")(BackendConfig(extra={"prefix_reuse": "no"}))


def test_reusable_prefix_policy():
    from conformbench.backends.llamacpp.backend import reusable_prefix

    assert reusable_prefix([], [1, 2, 3], 512) == 0
    assert reusable_prefix([1, 2, 9], [1, 2, 3, 4], 512) == 2
    # never the whole prompt, nor all but one token: the last token alone
    # would be evaluated by a different kernel path
    assert reusable_prefix([1, 2, 3, 4], [1, 2, 3, 4], 512) == 2
    assert reusable_prefix([1, 2, 3, 4, 5], [1, 2, 3, 4], 512) == 2
    # prompts longer than a batch reuse whole batches only
    long = list(range(1300))
    assert reusable_prefix(long[:1100], long, 512) == 1024
    assert reusable_prefix(long[:1000], long, 512) == 512


def test_prompt_longer_than_the_context_is_an_error_result(llama_backend):
    result = llama_backend.generate(ask("word " * 3000))
    assert result.finish_reason == "error" and "n_ctx is 2048" in (result.error or "")


def test_compiled_constraints_are_cached_per_engine_and_schema(llama_backend):
    schema = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 10}},
              "required": ["city"], "additionalProperties": False}
    request = GenerationRequest(ask("Capital of Peru?").prompt, DecodingSettings(max_tokens=24),
                                Constraint(schema, "llguidance"))
    hits = llama_backend.metadata()["compile_cache_hits"]
    first = llama_backend.generate(request)
    second = llama_backend.generate(request)
    assert first.compile_seconds > 0 and second.compile_seconds == 0.0
    assert first.text == second.text and first.engine_input == second.engine_input
    assert llama_backend.metadata()["compile_cache_hits"] == hits + 1


def test_bad_constraint_engines(llama_backend):
    prompt = ask("x").prompt
    with pytest.raises(UsageError, match="openai"):
        llama_backend.generate(GenerationRequest(prompt, constraint=Constraint({}, "server")))
    with pytest.raises(UnknownNameError, match="did you mean 'outlines'"):
        llama_backend.generate(GenerationRequest(prompt, constraint=Constraint({}, "outline")))


def test_negative_temperature_is_rejected(llama_backend):
    with pytest.raises(UsageError, match="temperature"):
        llama_backend.generate(ask("x", temperature=-1.0))


def test_metadata(llama_backend, smollm_path):
    meta = llama_backend.metadata()
    assert meta["backend"] == "llamacpp"
    assert meta["model_sha256"] == file_sha256(smollm_path) and len(meta["model_sha256"]) == 64
    # the file's name and hash, never the path (a home directory in a shared replay)
    assert meta["model_file"] == smollm_path.name and str(smollm_path.parent) not in json.dumps(meta)
    assert meta["threads"] == meta["threads_batch"] == 1 and meta["n_ctx"] == 2048  # --threads N sets both
    assert meta["chat_template"] == "gguf"
    assert meta["versions"]["llama-cpp-python"] == "0.3.36"
    assert meta["hardware"]["cpu_count"] >= 1
    assert meta["sampler"]["greedy_at_temperature_0"] is True


def test_default_threads_are_what_run_help_says():
    """`run -h`: without --threads, half the cores generate (1 on 2 cores) and
    every core reads prompts (llama-cpp-python's defaults), both recorded."""
    backend = backends.get("llamacpp")(BackendConfig(n_ctx=256))
    try:
        meta = backend.metadata()
    finally:
        backend.close()
    cores = os.cpu_count() or 1
    assert (meta["threads"], meta["threads_batch"]) == (max(cores // 2, 1), cores)


def test_unknown_backend_options_are_rejected():
    with pytest.raises(UsageError, match="unknown option"):
        backends.get("llamacpp")(BackendConfig(extra={"chat_templat": "none"}))
    with pytest.raises(UsageError, match="base_url"):
        backends.get("llamacpp")(BackendConfig(base_url="http://127.0.0.1:1/v1"))


def test_raw_prompt_without_chat_template():
    backend = backends.get("llamacpp")(BackendConfig(n_ctx=512, threads=1, extra={"chat_template": "none"}))
    try:
        prompt = Prompt((Message("system", "Facts."), Message("user", "Paris is in")), assistant_prefix=" France,")
        assert backend.render_prompt(prompt) == "Facts.\n\nParis is in\n\n France,"
        result = backend.generate(GenerationRequest(prompt, DecodingSettings(max_tokens=4)))
        assert result.completion_tokens > 0
        assert backend.metadata()["chat_template"] == "none"
    finally:
        backend.close()
