"""Structured-output dialects of OpenAI-compatible servers: where each puts
the JSON Schema in a request body, and which answers mean "this server does
not take that dialect" rather than "try again".

The schema always travels unchanged (key order kept). Which server takes
which dialect, with the versions checked, is in docs/runtime.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from conformbench.jsontypes import Schema

__all__ = ["DETECT_ORDER", "DIALECTS", "Dialect", "dialect_names", "is_request_validation_error"]

Body = dict[str, Any]


@dataclass(frozen=True)
class Dialect:
    name: str
    #: servers known to take it (for help and error messages)
    servers: str
    put: Callable[[Body, Schema, str], None]


def _json_schema(body: Body, schema: Schema, name: str) -> None:
    body["response_format"] = {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}


def _json_object_schema(body: Body, schema: Schema, _name: str) -> None:
    body["response_format"] = {"type": "json_object", "schema": schema}


def _structured_outputs(body: Body, schema: Schema, _name: str) -> None:
    body["structured_outputs"] = {"json": schema}


def _guided_json(body: Body, schema: Schema, _name: str) -> None:
    body["guided_json"] = schema


DIALECTS: dict[str, Dialect] = {
    d.name: d
    for d in (
        Dialect("json_schema", "OpenAI, vLLM, SGLang, llama.cpp's llama-server, Ollama", _json_schema),
        Dialect("json_object_schema", "llama-cpp-python's server, llama.cpp's llama-server", _json_object_schema),
        Dialect("structured_outputs", "vLLM >= 0.10.2", _structured_outputs),
        Dialect("guided_json", "vLLM < 0.12", _guided_json),
    )
}

#: tried in this order when a run names no dialect: the OpenAI shape first
#: (most servers), then llama-cpp-python's, then vLLM's extra-body fields
#: (a vLLM that ignores response_format still honours one of them)
DETECT_ORDER: tuple[str, ...] = tuple(DIALECTS)


def dialect_names() -> list[str]:
    return list(DIALECTS)


# llama-cpp-python's server wraps FastAPI's request validation error in an
# HTTP 500 ("1 validation error: {'type': 'literal_error', 'loc': ('body',
# 'response_format', 'type'), ...}"); the same request can never succeed.
_VALIDATION = re.compile(
    r"\bvalidation errors?\b|['\"]loc['\"]\s*:\s*[(\[]\s*['\"]body['\"]|\bextra_forbidden\b|\bliteral_error\b",
    re.IGNORECASE,
)


def is_request_validation_error(status: int, text: str) -> bool:
    """Whether a 5xx answer says the request itself is invalid (not worth a
    retry). 4xx answers are never retried in any case."""
    return status >= 500 and _VALIDATION.search(text[:4000]) is not None
