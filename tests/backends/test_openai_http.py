"""The openai backend's HTTP client against a real local server: answers in
request order whatever order they arrive in, at most ``concurrency`` in
flight, and a stream closed early leaves nothing running or open."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from chat_reply import send_chat_reply

from conformbench.backends.base import StreamsResults, backends
from conformbench.records.generation import BackendConfig, DecodingSettings, GenerationRequest
from conformbench.records.prompt import Message, Prompt


class _Slow(BaseHTTPRequestHandler):
    """Echoes the user message after sleeping the seconds it names
    ("0.05 item 3"), counting requests in flight."""

    lock = threading.Lock()
    in_flight = 0
    most = 0
    served = 0

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        text = body["messages"][-1]["content"]
        cls = type(self)
        with cls.lock:
            cls.in_flight += 1
            cls.most = max(cls.most, cls.in_flight)
        time.sleep(float(text.split()[0]))
        with cls.lock:
            cls.in_flight -= 1
            cls.served += 1
        send_chat_reply(self, text)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def slow_server() -> Iterator[str]:
    _Slow.in_flight = _Slow.most = _Slow.served = 0
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Slow)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def _request(text: str) -> GenerationRequest:
    return GenerationRequest(Prompt((Message("user", text),)), DecodingSettings(max_tokens=4))


def test_results_come_in_request_order_with_bounded_concurrency(slow_server: str) -> None:
    backend = backends.get("openai")(BackendConfig(base_url=slow_server, concurrency=4))
    assert isinstance(backend, StreamsResults)
    # early requests answer last: the stream must still hand them out first
    texts = [f"{0.2 if i < 2 else 0.01} item {i}" for i in range(12)]
    got = [r.text for r in backend.generate_stream([_request(t) for t in texts])]
    assert got == texts
    assert _Slow.most <= 4 and _Slow.most >= 2  # concurrent, within the bound


def test_closing_a_stream_early_cancels_the_rest(slow_server: str) -> None:
    backend = backends.get("openai")(BackendConfig(base_url=slow_server, concurrency=2))
    stream = backend.generate_stream([_request(f"0.3 item {i}") for i in range(8)])
    first = next(stream)
    stream.close()  # warnings are errors here: an unclosed session or socket fails the test
    assert first.text == "0.3 item 0"
    time.sleep(0.5)
    assert _Slow.served < 8, "requests went on after the stream was closed"
