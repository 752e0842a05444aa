from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conformbench.audits.canary import canary_constant, check_canary
from conformbench.backends.base import backends
from conformbench.errors import CanaryFailedError, UsageError
from conformbench.records.generation import (
    BackendConfig,
    Constraint,
    DecodingSettings,
    GenerationRequest,
)
from conformbench.records.prompt import Message, Prompt
from conformbench.validator.schema_validator import validator_for

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 12}, "age": {"type": "integer"}},
    "required": ["name", "age"],
    "additionalProperties": False,
}


def backend(base_url: str, **kwargs: object):
    extra = kwargs.pop("extra", {})
    return backends.get("openai")(BackendConfig(base_url=base_url, extra=extra, **kwargs))  # type: ignore[arg-type]


def request(text: str = "Describe a person called Bob as JSON.", constraint: Constraint | None = None,
            max_tokens: int = 48, prefix: str = "") -> GenerationRequest:
    return GenerationRequest(
        Prompt((Message("user", text),), assistant_prefix=prefix), DecodingSettings(max_tokens=max_tokens), constraint
    )


# -- request bodies (no server needed) ------------------------------------


@pytest.mark.parametrize(
    ("dialect", "where", "expected"),
    [
        ("json_schema", "response_format",
         {"type": "json_schema", "json_schema": {"name": "output", "schema": SCHEMA}}),
        ("json_object_schema", "response_format", {"type": "json_object", "schema": SCHEMA}),
        ("structured_outputs", "structured_outputs", {"json": SCHEMA}),
        ("guided_json", "guided_json", SCHEMA),
    ],
)
def test_each_dialect_carries_the_schema_unchanged(dialect, where, expected):
    req = request(constraint=Constraint(SCHEMA, "server"))
    body = backend("http://127.0.0.1:9/v1", extra={"response_format_dialect": dialect}).request_body(req)
    assert body[where] == expected
    others = {"response_format", "structured_outputs", "guided_json"} - {where}
    assert not others & set(body), "one dialect per request"
    sent = json.dumps(body[where])  # property order is part of the contract
    assert sent.index('"name"') < sent.index('"age"')
    assert body["messages"] == [{"role": "user", "content": req.prompt.messages[0].content}]
    assert body["max_tokens"] == 48 and body["temperature"] == 0.0 and "model" not in body


@pytest.mark.parametrize(("dialect", "where"), [("structured_outputs", ("structured_outputs", "grammar")),
                                             ("guided_json", ("guided_grammar",))])
def test_a_thinking_request_carries_the_lark_grammar_in_vllms_field(dialect, where):
    """think_then_constrain on a server: free text up to the stop string,
    then the schema, as the Lark grammar the local llguidance engine takes."""
    from conformbench.engines.thinking_grammar import thinking_grammar
    from conformbench.records.generation import Thinking

    req = request(constraint=Constraint(SCHEMA, "server", thinking=Thinking("<end>", 20)))
    body = backend("http://127.0.0.1:9/v1", extra={"response_format_dialect": dialect}).request_body(req)
    found = body[where[0]] if len(where) == 1 else body[where[0]][where[1]]
    assert found == thinking_grammar(SCHEMA, "<end>") and 'think[stop="<end>"]' in found
    assert not {"response_format", "guided_json"} & set(body) and body.get("structured_outputs", {}).get("json") is None


@pytest.mark.parametrize("dialect", ["json_schema", "json_object_schema", None])
def test_a_thinking_request_in_a_schema_only_dialect_is_refused_in_one_line(dialect):
    from conformbench.records.generation import Thinking

    extra = {"response_format_dialect": dialect} if dialect else {}
    req = request(constraint=Constraint(SCHEMA, "server", thinking=Thinking("</think>", 20)))
    with pytest.raises(UsageError, match="--dialect structured_outputs") as caught:
        backend("http://127.0.0.1:9/v1", extra=extra).request_body(req)
    assert "\n" not in str(caught.value) and "llama.cpp's servers" in str(caught.value)


def test_an_undetected_dialect_sends_the_openai_shape():
    http = backend("http://127.0.0.1:9/v1")
    assert http.dialect_pending and http.dialect is None
    body = http.request_body(request(constraint=Constraint(SCHEMA, "server")))
    assert body["response_format"]["type"] == "json_schema"
    assert backend("http://127.0.0.1:9/v1", extra={"response_format_dialect": "auto"}).dialect_pending


def test_completions_body_and_assistant_prefix():
    completions = backend("http://127.0.0.1:9/v1", model="m", extra={"endpoint": "completions"})
    body = completions.request_body(request("Q?", prefix="A:"))
    assert body["prompt"] == "Q?\n\nA:" and body["model"] == "m" and "messages" not in body
    chat = backend("http://127.0.0.1:9/v1").request_body(request("Q?", prefix="A:"))
    assert chat["messages"][-1] == {"role": "assistant", "content": "A:"}
    assert chat["continue_final_message"] is True and chat["add_generation_prompt"] is False


def test_bad_options_are_usage_errors():
    with pytest.raises(UsageError, match="base_url"):
        backends.get("openai")(BackendConfig())
    with pytest.raises(UsageError, match="unknown option"):
        backend("http://127.0.0.1:9/v1", extra={"dialect": "json_schema"})
    with pytest.raises(UsageError, match="response_format_dialect"):
        backend("http://127.0.0.1:9/v1", extra={"response_format_dialect": "guided_jsonn"})
    with pytest.raises(UsageError, match="engine 'server'"):
        backend("http://127.0.0.1:9/v1").request_body(request(constraint=Constraint(SCHEMA, "llguidance")))


# -- failures and retries -------------------------------------------------


@pytest.mark.timeout(60)
def test_closed_port_ends_in_a_per_item_error_record(unused_port):
    http = backend(f"http://127.0.0.1:{unused_port}/v1", max_retries=2, timeout_s=2.0,
                   extra={"backoff_s": 0.01})
    results = http.generate_many([request(), request(constraint=Constraint(SCHEMA, "server"))])
    assert [r.finish_reason for r in results] == ["error", "error"]
    assert "ConnectError" in (results[0].error or "") and "gave up after 3 attempt(s)" in (results[0].error or "")
    assert json.loads(results[1].engine_input or "")["response_format"]["json_schema"]["schema"] == SCHEMA
    assert http.counters.retries == 4 and http.counters.errors == 2


class ScriptedServer(BaseHTTPRequestHandler):
    """Answers POSTs from a script of (status, body) pairs, then echoes."""

    script: list[tuple[int, str]] = []
    seen: list[dict] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append(body)
        status, text = type(self).script.pop(0) if type(self).script else (200, "")
        if status == 200 and not text:
            reply = body["messages"][-1]["content"]
            text = json.dumps({"choices": [{"message": {"content": reply}, "finish_reason": "length"}],
                               "usage": {"prompt_tokens": 5, "completion_tokens": 7}})
        self.send_response(status)
        if status == 429:
            self.send_header("Retry-After", "0")
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(text.encode())

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def scripted() -> Iterator[tuple[str, type[ScriptedServer]]]:
    ScriptedServer.script, ScriptedServer.seen = [], []
    server = ThreadingHTTPServer(("127.0.0.1", 0), ScriptedServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", ScriptedServer
    server.shutdown()
    server.server_close()


def test_retries_on_429_and_5xx_then_succeeds(scripted):
    url, handler = scripted
    handler.script = [(429, "slow down"), (503, "busy")]
    http = backend(url, max_retries=3, extra={"backoff_s": 0.01})
    result = http.generate(request("echo me"))
    assert result.text == "echo me" and result.finish_reason == "length"
    assert (result.prompt_tokens, result.completion_tokens) == (5, 7)
    assert http.counters.retries == 2 and len(handler.seen) == 3


def test_client_errors_and_malformed_answers_are_not_retried(scripted):
    url, handler = scripted
    handler.script = [(400, "bad request"), (200, "{not json")]
    http = backend(url, max_retries=3, extra={"backoff_s": 0.01})
    first, second = http.generate_many([request("a"), request("b")])
    errors = sorted([first.error or "", second.error or ""])
    assert errors[0].startswith("HTTP 400: bad request") and errors[1].startswith("malformed response")
    assert http.counters.retries == 0 and len(handler.seen) == 2


def test_generate_many_keeps_request_order_under_concurrency(scripted):
    url, _handler = scripted
    http = backend(url, concurrency=3)
    texts = [r.text for r in http.generate_many([request(f"item {i}") for i in range(7)])]
    assert texts == [f"item {i}" for i in range(7)]


#: what llama-cpp-python's server (0.3.36) answers a dialect it does not take:
#: FastAPI's request validation error, wrapped as an HTTP 500
LLAMA_CPP_PYTHON_REFUSAL = json.dumps({"error": {
    "message": "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
               "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}",
    "type": "internal_server_error", "param": None, "code": None}})


def _chat(content: str) -> str:
    return json.dumps({"choices": [{"message": {"content": content}, "finish_reason": "stop"}],
                       "usage": {"prompt_tokens": 3, "completion_tokens": 9}})


def test_a_request_validation_error_costs_one_request(scripted):
    url, handler = scripted
    handler.script = [(500, LLAMA_CPP_PYTHON_REFUSAL)]
    http = backend(url, max_retries=4, extra={"backoff_s": 0.01})
    result = http.generate(request(constraint=Constraint(SCHEMA, "server")))
    assert result.finish_reason == "error" and "not retried" in (result.error or "")
    assert "literal_error" in (result.error or "")
    assert len(handler.seen) == 1 and http.counters.requests == 1 and http.counters.retries == 0


def test_a_plain_500_is_still_retried(scripted):
    url, handler = scripted
    handler.script = [(500, '{"error": {"message": "CUDA out of memory"}}')]
    http = backend(url, max_retries=2, extra={"backoff_s": 0.01})
    assert http.generate(request("echo")).text == "echo"
    assert len(handler.seen) == 2 and http.counters.retries == 1


def test_the_canary_request_detects_the_dialect(scripted):
    url, handler = scripted
    constant = canary_constant(5)
    handler.script = [(500, LLAMA_CPP_PYTHON_REFUSAL), (200, _chat(json.dumps({"canary": constant})))]
    http = backend(url, max_retries=4, extra={"backoff_s": 0.01})
    result = check_canary(http, "server", rng_seed=5)
    assert http.dialect == "json_object_schema" and not http.dialect_pending
    # one request per dialect tried: the refusal was not retried
    assert [b["response_format"]["type"] for b in handler.seen] == ["json_schema", "json_object"]
    assert result.dialect is not None and result.dialect.startswith("json_object_schema, detected (json_schema: ")
    meta = http.metadata()
    assert meta["response_format_dialect"] == "json_object_schema"
    assert "json_schema: error: HTTP 500 (a request validation error" in meta["dialect_choice"]
    # later requests use the dialect found
    assert http.request_body(request(constraint=Constraint(SCHEMA, "server")))["response_format"]["type"] == "json_object"


def test_a_server_that_ignores_every_dialect_fails_the_canary_with_a_hint(scripted):
    url, handler = scripted
    handler.script = [(200, _chat("It is sunny.")) for _ in range(4)]
    http = backend(url, extra={"backoff_s": 0.01})
    with pytest.raises(CanaryFailedError) as caught:
        check_canary(http, "server", rng_seed=5)
    message = str(caught.value)
    for dialect in ("json_schema", "json_object_schema", "structured_outputs", "guided_json"):
        assert f"{dialect}: got 'It is sunny.'" in message
    assert "--dialect" in message and len(handler.seen) == 4 and http.dialect_pending
    assert "guided_json" in handler.seen[3] and "structured_outputs" in handler.seen[2]


@pytest.mark.timeout(60)
def test_detection_stops_when_the_server_does_not_answer(unused_port):
    http = backend(f"http://127.0.0.1:{unused_port}/v1", max_retries=1, timeout_s=2.0, extra={"backoff_s": 0.01})
    with pytest.raises(CanaryFailedError, match="ConnectError"):
        check_canary(http, "server", rng_seed=5)
    assert http.counters.requests == 2  # one dialect, 1 + max_retries attempts: no point trying others


def test_a_given_dialect_is_not_detected(scripted):
    url, handler = scripted
    handler.script = [(500, LLAMA_CPP_PYTHON_REFUSAL)]
    http = backend(url, extra={"response_format_dialect": "json_schema", "backoff_s": 0.01})
    with pytest.raises(CanaryFailedError, match="leave --dialect out to detect it"):
        check_canary(http, "server", rng_seed=5)
    assert len(handler.seen) == 1 and http.metadata()["dialect_choice"] == "given"


# -- the real llama-cpp-python server -------------------------------------


@pytest.mark.slow
@pytest.mark.server
def test_chat_endpoint(llama_server):
    result = backend(llama_server).generate(request("Say hello.", max_tokens=16))
    assert result.finish_reason in ("stop", "length") and result.text.strip()
    assert result.prompt_tokens > 0 and 0 < result.completion_tokens <= 16


@pytest.mark.long
@pytest.mark.slow
@pytest.mark.server
def test_completions_endpoint(llama_server):
    http = backend(llama_server, extra={"endpoint": "completions"})
    result = http.generate(request("The capital of France is", max_tokens=8))
    assert result.finish_reason in ("stop", "length") and result.text
    assert result.completion_tokens <= 8


@pytest.mark.slow
@pytest.mark.server
def test_constrained_with_the_llama_cpp_python_dialect(llama_server):
    http = backend(llama_server, extra={"response_format_dialect": "json_object_schema"})
    result = http.generate(request(constraint=Constraint(SCHEMA, "server"), max_tokens=64))
    assert result.finish_reason == "stop"
    assert validator_for(SCHEMA).violations(json.loads(result.text)) == []
    sent = json.loads(result.engine_input or "")
    assert sent == http.request_body(request(constraint=Constraint(SCHEMA, "server"), max_tokens=64))


@pytest.mark.slow
@pytest.mark.server
def test_metadata_lists_the_served_model(llama_server):
    meta = backend(llama_server).metadata()
    assert meta["backend"] == "openai" and meta["base_url"] == llama_server
    assert isinstance(meta["server_models"], list) and meta["server_models"]
    assert meta["model_sha256"] is None and meta["versions"]["aiohttp"]


# -- llama.cpp's own llama-server (where installed) --------------------------


@pytest.mark.slow
@pytest.mark.server
def test_llama_server_takes_the_openai_dialect_first(llama_cpp_server):
    http = backend(llama_cpp_server, max_retries=0)
    result = check_canary(http, "server", rng_seed=3)
    assert http.dialect == "json_schema" and http.counters.requests == 1
    assert result.dialect == "json_schema, detected (json_schema: applied)"


@pytest.mark.slow
@pytest.mark.server
@pytest.mark.parametrize("dialect", ["json_schema", "json_object_schema"])
def test_llama_server_applies_both_response_format_dialects(llama_cpp_server, dialect):
    http = backend(llama_cpp_server, max_retries=0, extra={"response_format_dialect": dialect})
    check_canary(http, "server", rng_seed=3)
    result = http.generate(request(constraint=Constraint(SCHEMA, "server"), max_tokens=64))
    assert result.finish_reason == "stop", result.error
    assert validator_for(SCHEMA).violations(json.loads(result.text)) == []
