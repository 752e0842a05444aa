"""An OpenAI-compatible endpoint that answers at once (a benchmark fixture,
not a test double for correctness): it measures the client's ceiling, so it
does as little as a server can.

  POST /v1/chat/completions  a fixed assistant message (``--answer``), or,
                             for a request whose JSON Schema is the
                             constraint canary's (one ``const`` property),
                             exactly that constant, so the run's canary passes
                             and the structured-output dialect is detected
  POST /v1/completions       the same as ``text``
  GET  /v1/models            one model

A request with ``"stream": true`` gets the same text as server-sent events,
a chunk per 4 characters, then the finish reason (and ``usage`` when
``stream_options.include_usage`` asks for it) and ``[DONE]``, written at
once (``engines cost``'s client ceiling, benchmarks/cost_client.py).

HTTP/1.1 with keep-alive, written on asyncio's Protocol API (no framework:
the server must not be the bottleneck it is there to rule out). Run as a
script it prints ``PORT <n>`` on stdout once listening, then serves until
killed; one process, one thread (on a 2-core machine it takes one core at
most, leaving the other to the client).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

DEFAULT_ANSWER = '{"name": "calculate_triangle_area", "arguments": {"base": 10, "height": 5}}'
_MODELS = json.dumps({"object": "list", "data": [{"id": "instant", "object": "model"}]}).encode()


def _canary_constant(body: dict[str, Any]) -> str | None:
    """The constant of a canary-shaped schema in any known dialect, else None."""
    fmt = body.get("response_format") or {}
    schema = (fmt.get("json_schema") or {}).get("schema") or fmt.get("schema") \
        or (body.get("structured_outputs") or {}).get("json") or body.get("guided_json")
    if not isinstance(schema, dict):
        return None
    canary = (schema.get("properties") or {}).get("canary")
    return canary.get("const") if isinstance(canary, dict) else None


def completion(body: dict[str, Any], answer: str, chat: bool) -> bytes:
    """The JSON answer to one request body."""
    constant = _canary_constant(body)
    text = json.dumps({"canary": constant}) if constant is not None else answer
    choice: dict[str, Any] = {"index": 0, "finish_reason": "stop"}
    if chat:
        choice["message"] = {"role": "assistant", "content": text}
    else:
        choice["text"] = text
    return json.dumps({
        "id": "instant", "object": "chat.completion" if chat else "text_completion",
        "model": "instant", "choices": [choice],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
    }).encode()


def stream_events(body: dict[str, Any], answer: str, chat: bool) -> bytes:
    """The streamed answer to one request body: its server-sent events."""
    constant = _canary_constant(body)
    text = json.dumps({"canary": constant}) if constant is not None else answer
    pieces = [text[i:i + 4] for i in range(0, len(text), 4)]

    def event(piece: str | None, finish: str | None) -> bytes:
        choice: dict[str, Any] = {"index": 0, "finish_reason": finish}
        if chat:
            choice["delta"] = {} if piece is None else {"content": piece}
        else:
            choice["text"] = piece or ""
        return b"data: " + json.dumps({"id": "instant", "model": "instant", "choices": [choice]}).encode() + b"\n\n"

    out = [event(p, None) for p in pieces] + [event(None, "stop")]
    if (body.get("stream_options") or {}).get("include_usage"):
        usage = {"prompt_tokens": 100, "completion_tokens": len(pieces), "total_tokens": 100 + len(pieces)}
        out.append(b"data: " + json.dumps({"id": "instant", "choices": [], "usage": usage}).encode() + b"\n\n")
    return b"".join([*out, b"data: [DONE]\n\n"])


class _Http(asyncio.Protocol):
    """One keep-alive connection: parse requests as bytes arrive, answer each."""

    def __init__(self, answer: str) -> None:
        self._answer = answer
        self._buf = b""
        self._transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport

    def data_received(self, data: bytes) -> None:
        self._buf += data
        while True:
            head_end = self._buf.find(b"\r\n\r\n")
            if head_end < 0:
                return
            head = self._buf[:head_end].decode("latin-1")
            length = 0
            for line in head.split("\r\n")[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value.strip())
            end = head_end + 4 + length
            if len(self._buf) < end:
                return
            body, self._buf = self._buf[head_end + 4:end], self._buf[end:]
            self._answer_one(head.split(" ", 2), body)

    def _answer_one(self, request_line: list[str], body: bytes) -> None:
        method, path = request_line[0], request_line[1] if len(request_line) > 1 else ""
        if method == "GET" and path.endswith("/models"):
            self._send(200, _MODELS)
        elif method == "POST" and path.endswith("/completions"):
            try:
                data = json.loads(body)
            except ValueError:
                self._send(400, b'{"error": "bad json"}')
                return
            chat = path.endswith("/chat/completions")
            if isinstance(data, dict) and data.get("stream"):
                self._send(200, stream_events(data, self._answer, chat), "text/event-stream")
            else:
                self._send(200, completion(data, self._answer, chat=chat))
        else:
            self._send(404, b'{"error": "not found"}')

    def _send(self, status: int, payload: bytes, kind: str = "application/json") -> None:
        assert self._transport is not None
        reason = {200: "OK", 400: "Bad Request", 404: "Not Found"}[status]
        head = (f"HTTP/1.1 {status} {reason}\r\ncontent-type: {kind}\r\n"
                f"content-length: {len(payload)}\r\n\r\n").encode()
        self._transport.write(head + payload)


async def serve(port: int, answer: str, ready: asyncio.Future[int] | None = None) -> None:
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: _Http(answer), "127.0.0.1", port, backlog=1024)
    bound = server.sockets[0].getsockname()[1]
    if ready is not None:
        ready.set_result(bound)
    else:
        print(f"PORT {bound}", flush=True)
    async with server:
        await server.serve_forever()


def main() -> int:
    ap = argparse.ArgumentParser(description="instant OpenAI-compatible endpoint (benchmark fixture)")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--answer", default=DEFAULT_ANSWER, help="assistant text of every answer")
    a = ap.parse_args()
    try:
        asyncio.run(serve(a.port, a.answer))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
