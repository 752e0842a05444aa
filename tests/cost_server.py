"""A small real OpenAI-compatible server on 127.0.0.1 that streams, for
``engines cost``'s tests that need a behaviour a model server cannot be
made to show on demand: its scripted "model" answers the canary's constant
(non-streamed, as the canary asks), streams a fixed sentence with the
grammar off and the first valid instance of the schema (conformbench's
oracle) with it on, a chunk per 3 characters and ``usage`` when asked.

Behaviours of the constrained streamed requests (the canary always passes):
``obey`` as above; ``stall`` sends the stream's headers and then nothing;
``refuse`` answers HTTP 400 ("schema not supported"); ``silent`` answers the
whole completion as JSON, not as events (a server that does not stream);
``loose`` adds a property ``extra`` to an object instance (a grammar that
dropped ``additionalProperties``); ``filter`` ends the stream with
``finish_reason: content_filter``; ``inflate`` claims 2**31 - 1 completion
tokens in its ``usage``; ``lossy`` ends every second constrained stream
without text (as llama-cpp-python's server does to a stream another request
interrupts).
Every POST is counted (``posts``), so a test sees what a resumed run sent.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from conformbench.schemas.oracle import find_valid

FREE_TEXT = "I would call the function with base 10."


def _schema_of(body: dict[str, Any]) -> dict[str, Any] | None:
    fmt = body.get("response_format") or {}
    schema = (fmt.get("json_schema") or {}).get("schema") or fmt.get("schema")
    return schema if isinstance(schema, dict) else None


def _events(text: str, usage: bool, finish: str = "stop", claimed: int | None = None) -> list[bytes]:
    pieces = [text[i:i + 3] for i in range(0, len(text), 3)]
    rows = [{"choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]} for p in pieces]
    rows.append({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    if usage:
        tokens = len(pieces) if claimed is None else claimed
        rows.append({"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": tokens}})
    return [b"data: " + json.dumps(r).encode() + b"\n\n" for r in rows] + [b"data: [DONE]\n\n"]


class CostServer:
    def __init__(self, behaviour: str = "obey") -> None:
        self.behaviour = behaviour
        self.posts = 0
        self.lossy_count = 0
        self.streamed: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, payload: bytes, kind: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self) -> None:
                self._send(200, b'{"object": "list", "data": [{"id": "scripted"}]}')

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                outer.posts += 1
                outer.answer(self, body)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self.stop_stall = threading.Event()

    def answer(self, handler: Any, body: dict[str, Any]) -> None:
        schema = _schema_of(body)
        canary = ((schema or {}).get("properties") or {}).get("canary")
        if not body.get("stream"):
            text = json.dumps({"canary": canary["const"]}) if canary else FREE_TEXT
            handler._send(200, json.dumps({"choices": [{"index": 0, "message": {"content": text},
                                                        "finish_reason": "stop"}],
                                           "usage": {"prompt_tokens": 10, "completion_tokens": 5}}).encode())
            return
        self.streamed.append(body)
        if schema is not None and self.behaviour == "refuse":
            handler._send(400, b'{"error": {"message": "schema not supported"}}')
            return
        if schema is not None and self.behaviour == "silent":
            handler._send(200, b'{"choices": [{"message": {"content": "{}"}}]}')
            return
        if schema is not None and self.behaviour == "stall":
            handler.send_response(200)
            handler.send_header("Content-Type", "text/event-stream")
            handler.end_headers()
            handler.wfile.flush()
            self.stop_stall.wait(30)
            return
        instance = None if schema is None else find_valid(schema).instance
        if self.behaviour == "loose" and isinstance(instance, dict):  # a grammar that drops additionalProperties
            instance = {**instance, "extra": 1}
        text = FREE_TEXT if schema is None else json.dumps(instance)
        usage = bool((body.get("stream_options") or {}).get("include_usage"))
        finish, claimed = "stop", None
        if schema is not None and self.behaviour == "filter":
            finish = "content_filter"
        if schema is not None and self.behaviour == "inflate":
            claimed = 2**31 - 1
        if schema is not None and self.behaviour == "lossy" and body.get("max_tokens", 0) > 1:
            self.lossy_count += 1
            if self.lossy_count % 2 == 0:
                text = ""
        # an event at a time (HTTP/1.0: the stream ends when the connection does)
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.end_headers()
        for event in _events(text, usage, finish, claimed):
            time.sleep(0.002)
            handler.wfile.write(event)
            handler.wfile.flush()

    def __enter__(self) -> CostServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop_stall.set()
        self._httpd.shutdown()
        self._httpd.server_close()
