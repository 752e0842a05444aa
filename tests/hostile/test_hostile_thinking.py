"""A thinking over the parse limit keeps its answer on the openai backend
(issue #59, case 10): the client cut the server's whole text to 1,000,001
characters before the runner split the thinking off, so the stop string and
the answer after it were lost ("no stop string") and `thinking_chars` was
the cut length. A server on 127.0.0.1 sends a 1.2M-character thinking, the
stop string and a valid answer through the real backend and runner steps."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conformbench.backends.base import backends
from conformbench.records.generation import (
    BackendConfig,
    Constraint,
    DecodingSettings,
    GenerationRequest,
    GenerationResult,
    Thinking,
)
from conformbench.records.prompt import Message, Prompt
from conformbench.records.replay import GenerationRecord
from conformbench.runner.session import split_answer

SCHEMA = {"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]}
STOP = "</think>"


def _serve(content: str) -> Iterator[str]:
    body = json.dumps({"choices": [{"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
                       "usage": {"prompt_tokens": 3, "completion_tokens": 9}}).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(params=[1_200_000, 3_000_000])
def thought(request: pytest.FixtureRequest) -> str:
    return "3 + 4 = 7. " * (request.param // 11)


def _generate(url: str) -> tuple[GenerationRequest, GenerationResult]:
    backend = backends.get("openai")(BackendConfig(model="m", base_url=url, max_retries=0, concurrency=1,
                                                   extra={"response_format_dialect": "structured_outputs"}))
    request = GenerationRequest(Prompt(messages=(Message("user", "7?"),)), DecodingSettings(max_tokens=64),
                                Constraint(SCHEMA, "server", thinking=Thinking(STOP, 32)))
    outcome = split_answer(request, backend.generate(request))
    assert isinstance(outcome, GenerationResult)
    return request, outcome


def test_a_thinking_over_the_parse_limit_keeps_its_answer_and_its_length(thought: str) -> None:
    for url in _serve(thought + STOP + '{"answer": 7}'):
        _request, outcome = _generate(url)
        assert outcome.finish_reason == "stop", outcome.error
        assert outcome.text == '{"answer": 7}'  # not "" ("no stop string")
        assert outcome.thinking is not None and len(outcome.thinking) == len(thought)


def test_a_thinking_stored_in_a_record_counts_its_whole_length(thought: str) -> None:
    from conformbench.records.replay import as_stored

    for url in _serve(thought + STOP + '{"answer": 7}'):
        _request, outcome = _generate(url)
        assert outcome.thinking is not None
        record = GenerationRecord.model_validate(_record_fields(outcome))
        stored = as_stored(record)
        assert stored.thinking_chars == len(thought)
        assert stored.thinking_sha256 == hashlib.sha256(thought.encode("utf-8")).hexdigest()


def test_an_answer_over_the_limit_after_the_thinking_is_still_cut() -> None:
    """The bound stays: what follows the stop string is cut as any answer is."""
    for url in _serve("short thought" + STOP + "1" * 1_500_000):
        _request, outcome = _generate(url)
        assert outcome.thinking == "short thought"
        assert len(outcome.text) == 1_000_001 and "only its first" in (outcome.error or "")


def _record_fields(outcome: GenerationResult) -> dict[str, object]:
    return {"kind": "generation", "task": "t", "model": "m", "item_id": "i",
            "condition": {"arm": "think_then_constrain", "engine": "server", "contract": "schema"},
            "prompt": {"messages": [{"role": "user", "content": "7?"}]},
            "text": outcome.text, "finish_reason": outcome.finish_reason, "thinking": outcome.thinking}
