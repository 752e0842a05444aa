"""A small real OpenAI-compatible HTTP server on 127.0.0.1 whose structured
output misbehaves on purpose, to test what conformbench says about servers
(``engines probe --backend openai``, the canary) against each behaviour:

* ``ignore``  answers as if no schema were sent (``response_format`` and the
              other dialects' fields are read and thrown away);
* ``drop``    applies the schema without one keyword (``drop_keyword``,
              removed wherever it appears), as a server that silently does
              not support it;
* ``obey``    applies the whole schema.

Its "model" is scripted, so a test knows what it would write: it follows
the nudge in the last user message (``Return a JSON object whose "n" is
12.5.``, ``Set "n" to 12.5``, ``Output only JSON: {...}``: the keyword probe's
prompts) and otherwise writes one fixed sentence. Under a schema the answer
is that text if it is valid JSON satisfying the schema (as applied), else
the first instance conformbench's oracle finds for it (``schemas.oracle``);
a schema it cannot satisfy gets the model's text.

Requests are read with a size cap; every constrained body received is kept
(``bodies``) so a test can see what was sent. It serves
``GET /v1/models`` and ``POST /v1/chat/completions``.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal, Self

from conformbench.jsontypes import Schema

__all__ = ["BEHAVIOURS", "FALLBACK_ANSWER", "SchemaServer", "scripted_answer"]

Behaviour = Literal["ignore", "drop", "obey"]
BEHAVIOURS: tuple[Behaviour, ...] = ("ignore", "drop", "obey")
#: what the scripted model writes to a prompt that nudges it to nothing
FALLBACK_ANSWER = "The weather is mild today."
_MAX_BODY = 4 * 1024 * 1024
_NUDGES = (
    re.compile(r'Output only JSON: (\{.*\})\s*$', re.DOTALL),
    re.compile(r'whose "([^"]+)" is (.+?)\.\s*$', re.DOTALL),
    re.compile(r'Set "([^"]+)" to (.+?), exactly as given', re.DOTALL),
)


def scripted_answer(prompt: str) -> str:
    """What the scripted model writes to ``prompt``: the JSON it is nudged to."""
    for pattern in _NUDGES:
        found = pattern.search(prompt)
        if found is None:
            continue
        if len(found.groups()) == 1:
            return found.group(1)
        try:
            return json.dumps({found.group(1): json.loads(found.group(2))})
        except ValueError:
            continue
    return FALLBACK_ANSWER


def _without(schema: Any, keyword: str) -> Any:
    if isinstance(schema, dict):
        return {k: _without(v, keyword) for k, v in schema.items() if k != keyword}
    if isinstance(schema, list):
        return [_without(v, keyword) for v in schema]
    return schema


def _schema_of(body: dict[str, Any]) -> Schema | None:
    """The schema in any dialect conformbench sends (backends/openai/dialects.py)."""
    fmt = body.get("response_format")
    if isinstance(fmt, dict):
        inner = fmt.get("json_schema")
        found = inner.get("schema") if isinstance(inner, dict) else fmt.get("schema")
        if isinstance(found, dict):
            return found
    for key, sub in (("structured_outputs", "json"), ("guided_json", None)):
        value = body.get(key)
        value = value.get(sub) if sub and isinstance(value, dict) else value
        if isinstance(value, dict):
            return value
    return None


def _decode(text: str, schema: Schema) -> str:
    """The scripted model's text under ``schema``: itself if it satisfies
    the schema, else the oracle's first instance of it."""
    from conformbench.schemas.oracle import find_valid
    from conformbench.validator.schema_validator import validator_for

    try:
        if validator_for(schema).is_valid(json.loads(text)):
            return text
    except ValueError:
        pass
    found = find_valid(schema)
    return json.dumps(found.instance) if found.found else text


class SchemaServer:
    """``with SchemaServer("drop", drop_keyword="maxLength") as server:``
    then point the openai backend at ``server.base_url``."""

    def __init__(self, behaviour: Behaviour, drop_keyword: str | None = None) -> None:
        if behaviour not in BEHAVIOURS:
            raise ValueError(f"behaviour must be one of {BEHAVIOURS}, not {behaviour!r}")
        if (behaviour == "drop") != (drop_keyword is not None):
            raise ValueError("drop_keyword is given with behaviour 'drop', and only then")
        self.behaviour = behaviour
        self.drop_keyword = drop_keyword
        #: the constrained request bodies received, in order
        self.bodies: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="schema-server", daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def answer(self, body: dict[str, Any]) -> str:
        """The reply text to a chat request body, as this behaviour decodes it."""
        messages = body.get("messages") or []
        users = [m.get("content", "") for m in messages if isinstance(m, dict) and m.get("role") == "user"]
        text = scripted_answer(str(users[-1]) if users else "")
        schema = _schema_of(body)
        if schema is None or self.behaviour == "ignore":
            return text
        with self._lock:
            self.bodies.append(body)
        if self.behaviour == "drop" and self.drop_keyword is not None:
            schema = _without(schema, self.drop_keyword)
        return _decode(text, schema)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


def _handler(server: SchemaServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass  # quiet: tests read the bodies, not a log

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Server", f"conformbench-schema-server/{server.behaviour}")
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                self._send(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]})
            else:
                self._send(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if not self.path.endswith("/chat/completions") or not 0 < length <= _MAX_BODY:
                self._send(404 if length else 400, {"error": {"message": "POST /v1/chat/completions with a body"}})
                return
            try:
                body = json.loads(self.rfile.read(length))
            except ValueError:
                self._send(400, {"error": {"message": "the body is not JSON"}})
                return
            text = server.answer(body)
            self._send(200, {
                "id": "chatcmpl-scripted", "object": "chat.completion", "model": "scripted",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                             "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": max(1, len(text) // 4),
                          "total_tokens": 10 + max(1, len(text) // 4)},
            })

    return Handler
