"""The answer of a minimal OpenAI-compatible chat endpoint, for the tests'
local HTTP servers (written once: several tests serve their own)."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler

__all__ = ["send_chat_reply"]


def send_chat_reply(handler: BaseHTTPRequestHandler, text: str) -> None:
    """Write a 200 chat-completion response whose message is ``text``."""
    reply = json.dumps({"choices": [{"message": {"content": text}, "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1}}).encode()
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(reply)))
    handler.end_headers()
    handler.wfile.write(reply)
