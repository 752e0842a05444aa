"""A misbehaving OpenAI-compatible endpoint on 127.0.0.1 for tests: each
path prefix plays one hostile server (drip, gzip bomb, huge body, control
characters at the parse limit, redirect to
another origin, null content, odd finish reasons, absurd usage), and every
request's Authorization header is kept in ``seen`` (its body in ``bodies``)
so a test can check where a key or a file's text went."""

from __future__ import annotations

import json
import threading
import time
import zlib
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["Endpoint"]



@cache
def _bomb() -> bytes:
    """~1 MB of gzip inflating to 1 GB, built a MB at a time."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    mb = bytes(1024 * 1024)
    return b"".join([*(packer.compress(mb) for _ in range(1024)), packer.flush()])


def _chat(content: Any, finish: Any = "stop", usage: Any = None) -> bytes:
    return json.dumps({"choices": [{"message": {"role": "assistant", "content": content},
                                    "finish_reason": finish}],
                       "usage": usage or {"prompt_tokens": 3, "completion_tokens": 2}}).encode()


class Endpoint:
    def __init__(self, redirect_to: str | None = None) -> None:
        self.redirect_to = redirect_to
        self.seen: list[tuple[str, str | None]] = []
        #: every request body received, in order
        self.bodies: list[bytes] = []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                endpoint.seen.append((self.path, self.headers.get("Authorization")))
                length = int(self.headers.get("Content-Length") or 0)
                endpoint.bodies.append(self.rfile.read(length) if length else b"")
                endpoint.answer(self)

            do_GET = do_POST = _answer

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True

    def base(self, mode: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/{mode}/v1"

    def answer(self, h: BaseHTTPRequestHandler) -> None:
        mode = h.path.split("/")[1]
        if mode == "redirect":
            h.send_response(307)
            h.send_header("Location", f"{self.redirect_to}{h.path.removeprefix('/redirect')}")
            h.send_header("Content-Length", "0")
            h.end_headers()
            return
        if mode == "drip":
            h.send_response(200)
            h.send_header("Content-Length", "100000")
            h.end_headers()
            for _ in range(1000):
                h.wfile.write(b" ")
                h.wfile.flush()
                time.sleep(0.3)
            return
        body, headers = self._body(mode)
        h.send_response(200)
        for k, v in {"Content-Type": "application/json", **headers}.items():
            h.send_header(k, v)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    def _body(self, mode: str) -> tuple[bytes, dict[str, str]]:
        if mode == "bomb":
            return _bomb(), {"Content-Encoding": "gzip"}
        if mode == "huge":
            return _chat("1" * 3_000_000), {}
        if mode == "controls":  # the longest text stored whole, 6 bytes a character as JSON
            return _chat("\x01" * 1_000_001), {}
        if mode == "null":
            return _chat(None, "content_filter"), {}
        if mode == "filter":
            return _chat('{"a": 1}', "content_filter"), {}
        if mode == "usage":
            return b'{"choices":[{"message":{"content":"{}"},"finish_reason":"stop"}],' \
                   b'"usage":{"prompt_tokens":1e400,"completion_tokens":1}}', {}
        return json.dumps({"data": [{"id": "ok"}]}).encode() if "models" in mode else _chat("{}"), {}

    def __enter__(self) -> Endpoint:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
