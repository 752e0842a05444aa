"""Structured-output dialects of OpenAI-compatible servers: where each puts
the JSON Schema in a request body, and which answers mean "this server does
not take that dialect" rather than "try again".

The schema always travels unchanged (key order kept). vLLM's own fields
also carry a grammar (think_then_constrain's free text, then the schema);
the OpenAI shapes carry none. Which server takes which dialect, with the
versions checked, is in docs/runtime.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from conformbench.engines.thinking_grammar import thinking_grammar
from conformbench.errors import UsageError
from conformbench.jsontypes import Schema
from conformbench.records.generation import Constraint
from conformbench.records.tool_calls import ToolRequest

__all__ = ["DETECT_ORDER", "DIALECTS", "Dialect", "dialect_names", "grammar_refusal", "is_request_validation_error",
           "put_constraint", "put_tools"]

Body = dict[str, Any]


@dataclass(frozen=True)
class Dialect:
    name: str
    #: servers known to take it (for help and error messages)
    servers: str
    put: Callable[[Body, Schema, str], None]
    #: where it puts a grammar (llguidance's Lark: think_then_constrain's
    #: free text, then the schema); None: the dialect carries a schema only
    put_grammar: Callable[[Body, str], None] | None = None


def _json_schema(body: Body, schema: Schema, name: str) -> None:
    body["response_format"] = {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}


def _json_object_schema(body: Body, schema: Schema, _name: str) -> None:
    body["response_format"] = {"type": "json_object", "schema": schema}


def _structured_outputs(body: Body, schema: Schema, _name: str) -> None:
    body["structured_outputs"] = {"json": schema}


def _guided_json(body: Body, schema: Schema, _name: str) -> None:
    body["guided_json"] = schema


def _structured_grammar(body: Body, grammar: str) -> None:
    body["structured_outputs"] = {"grammar": grammar}


def _guided_grammar(body: Body, grammar: str) -> None:
    body["guided_grammar"] = grammar


DIALECTS: dict[str, Dialect] = {
    d.name: d
    for d in (
        Dialect("json_schema", "OpenAI, vLLM, SGLang, llama.cpp's llama-server, Ollama", _json_schema),
        Dialect("json_object_schema", "llama-cpp-python's server, llama.cpp's llama-server", _json_object_schema),
        Dialect("structured_outputs", "vLLM >= 0.10.2", _structured_outputs, _structured_grammar),
        Dialect("guided_json", "vLLM < 0.12", _guided_json, _guided_grammar),
    )
}

#: tried in this order when a run names no dialect: the OpenAI shape first
#: (most servers), then llama-cpp-python's, then vLLM's extra-body fields
#: (a vLLM that ignores response_format still honours one of them)
DETECT_ORDER: tuple[str, ...] = tuple(DIALECTS)


def dialect_names() -> list[str]:
    return list(DIALECTS)


def grammar_refusal(dialect: str | None) -> str | None:
    """Why think_then_constrain cannot be sent in ``dialect`` (None or
    "auto": not given), or None where the dialect carries a grammar."""
    found = DIALECTS.get(dialect or "")
    if found is not None and found.put_grammar is not None:
        return None
    said = (f"--dialect {dialect} ({found.servers}) carries a JSON Schema only" if found is not None
            else "no --dialect given (detection finds the OpenAI shape, json_schema, first: a JSON Schema only)")
    return ("think_then_constrain on the openai backend sends a grammar (free text up to the stop string, then the "
            "schema, in llguidance's Lark), which only vLLM's own fields carry: add --dialect structured_outputs "
            f"(vLLM >= 0.10.2) or guided_json (vLLM < 0.12); {said}. llama.cpp's servers take a JSON Schema or "
            "a GBNF grammar (Lark only in a llama-server built with LLGuidance, not wired here): run such a "
            "model locally with --backend llamacpp --engine llguidance")


def put_constraint(body: Body, dialect: Dialect, constraint: Constraint, name: str) -> None:
    """``constraint`` in ``body`` as ``dialect`` carries it: its schema, or
    under a thinking constraint (think_then_constrain) the grammar of free
    text up to the stop string, then the schema (the Lark grammar the local
    llguidance engine takes), where the dialect has a grammar field."""
    if constraint.thinking is None:
        dialect.put(body, constraint.schema, name)
    elif dialect.put_grammar is None:  # the run refuses such arms first (runner/instruments.py)
        raise UsageError(grammar_refusal(dialect.name) or dialect.name)
    else:
        dialect.put_grammar(body, thinking_grammar(constraint.schema, constraint.thinking.stop))


def put_tools(body: Body, tools: ToolRequest | None, endpoint: str) -> None:
    """The functions offered (``tools``, each with ``strict`` where the mode
    says) and ``tool_choice``, as the OpenAI chat API takes them (nothing
    for a request without tools)."""
    if tools is None:
        return
    if endpoint != "chat":
        raise UsageError("a tools arm sends functions through the chat endpoint's tools field: use --endpoint chat")
    body["tools"] = [f.as_tool(tools.mode.strict) for f in tools.functions]
    body["tool_choice"] = tools.tool_choice()


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
