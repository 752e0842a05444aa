"""Which server a run went to: vLLM and SGLang say who they are in
``/v1/models``'s ``owned_by`` ("vllm"), and the run's model record keeps it
beside ``server_version`` (#58: a vLLM run recorded its version, never that
it was vLLM). Served here by a real HTTP server on 127.0.0.1 that answers
as vLLM's /v1/models does; tests/testing/test_vllm_server.py runs vLLM."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conformbench.backends.base import backends
from conformbench.records.generation import BackendConfig

#: what vLLM 0.32's /v1/models answered (trimmed)
VLLM_MODELS = {"object": "list", "data": [{"id": "m", "object": "model", "created": 1, "owned_by": "vllm",
                                           "root": "/models/m", "parent": None, "max_model_len": 2048}]}


class _Models(BaseHTTPRequestHandler):
    answer: object = VLLM_MODELS

    def do_GET(self) -> None:
        body = json.dumps(self.answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def _serve(answer: object) -> Iterator[str]:
    handler = type("Answer", (_Models,), {"answer": answer})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(("answer", "owned_by"), [
    (VLLM_MODELS, "vllm"),
    ({"object": "list", "data": [{"id": "a", "owned_by": "sglang"}, {"id": "b", "owned_by": "sglang"}]}, "sglang"),
    ({"object": "list", "data": [{"id": "a"}]}, None),  # llama-cpp-python's says "me"; a server may say nothing
    ({"object": "list", "data": [{"id": "a", "owned_by": 7}]}, None),  # untrusted: only a string is kept
])
def test_the_model_record_says_which_server(answer: object, owned_by: str | None) -> None:
    for url in _serve(answer):
        backend = backends.get("openai")(BackendConfig(model="m", base_url=url))
        facts = backend.metadata()
        assert facts["server_owned_by"] == owned_by
        assert facts["server_models"] == [m["id"] for m in answer["data"]]  # type: ignore[index]
