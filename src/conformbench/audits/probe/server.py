"""The keyword probe's verdicts on an HTTP server's own structured decoding
(engine "server", the openai backend), stricter than on an in-process
engine, because a server can drop a schema, or part of one, without a word:

* ignored       the server ignores the schema: the canary failed and the
                server gave the same answer to the canary's prompt with and
                without the schema (every keyword is ignored);
* not enforced  the server applied the schema (its answer changed) but an
                output violates the keyword;
* enforced      every output satisfies the whole probe schema (the probed
                field present and the keyword kept) and every request
                carried the keyword;
* refused       the server answered the keyword's schema with an HTTP 400
                or 422 (vLLM's xgrammar: "features not supported"), after
                the canary passed in the same dialect: it says it will not
                decode under that schema;
* inconclusive  nothing could be judged, a request did not carry the
                keyword, or the outputs broke the schema elsewhere (the
                probed field missing) without testing the keyword.

A sample cut at the token cap is asked again once with ``CUT_RETRY``
times the cap (a server's grammar may allow a long value or long
whitespace: a cut answer cannot be judged).
"""

from __future__ import annotations

import json
from typing import Any

from conformbench.audits.canary import canary_constant, canary_schema, grammar_request
from conformbench.audits.keyword_classes import KeywordStatus
from conformbench.backends.base import Backend
from conformbench.records.generation import Constraint, GenerationRequest
from conformbench.records.markdown_escape import md_text
from conformbench.records.prompt import CANARY_PROMPT
from conformbench.records.spec import SERVER_ENGINE

__all__ = [
    "CUT_RETRY",
    "SERVER_MEANINGS",
    "canary_failure_verdict",
    "carries_keyword",
    "ignores_schema",
    "schema_refusal",
    "server_legend",
    "server_lines",
    "server_verdict",
]

SERVER_MEANINGS: dict[str, str] = {
    "enforced": "every output satisfied the whole probe schema and every request carried the keyword",
    "not enforced": "the server applied the schema, but an output violated the keyword",
    "ignored": "the server ignores the schema: the same answer with and without it",
    "refused": "the server answered the keyword's schema with an HTTP 400/422 error (its message in the detail)",
    "inconclusive": "nothing could be judged, or the outputs broke the schema elsewhere (the field missing)",
}


#: a sample cut at the cap is asked again once with this many times the cap
CUT_RETRY = 4

_REFUSALS = ("HTTP 400", "HTTP 422")


def schema_refusal(error: str | None) -> str | None:
    """The server's own message where ``error`` is its refusal of the
    request (HTTP 400 or 422), else None. Asked only after the canary passed
    in the same dialect, so the refusal is of the keyword's schema."""
    if error is None or not error.startswith(_REFUSALS):
        return None
    status, _, body = error.partition(": ")
    try:
        data = json.loads(body)
        message = data["error"]["message"] if isinstance(data.get("error"), dict) else data.get("message", body)
    except (ValueError, AttributeError, KeyError, TypeError, RecursionError):
        message = body
    return f"{status}: {str(message).strip()[:300]}"


def _keywords_in(node: Any, keyword: str) -> bool:
    if isinstance(node, dict):
        return keyword in node or any(_keywords_in(v, keyword) for v in node.values())
    if isinstance(node, list):
        return any(_keywords_in(v, keyword) for v in node)
    return False


def carries_keyword(engine_input: str | None, keyword: str) -> bool:
    """Whether the request body sent (a constrained result's
    ``engine_input``) holds ``keyword`` as a key of a schema in it."""
    if not engine_input:
        return False
    try:
        body = json.loads(engine_input)
    except ValueError:
        return False
    schemas = [body.get("response_format"), body.get("structured_outputs"), body.get("guided_json")]
    return any(_keywords_in(s, keyword) for s in schemas if s is not None)


def ignores_schema(backend: Backend, seed: int, max_tokens: int) -> bool:
    """Whether the server answers the canary's prompt identically with and
    without the canary schema (asked after a failed canary)."""
    constrained = grammar_request(CANARY_PROMPT, Constraint(canary_schema(canary_constant(seed)), SERVER_ENGINE),
                                  max_tokens, seed)
    free = GenerationRequest(prompt=constrained.prompt, settings=constrained.settings, constraint=None)
    with_schema, without = backend.generate_many([constrained, free])
    if "error" in (with_schema.finish_reason, without.finish_reason):
        return False
    return with_schema.text == without.text


def canary_failure_verdict(backend: Backend, engine: str, seed: int,
                           max_tokens: int) -> tuple[KeywordStatus, str] | None:
    """Every keyword's verdict after a failed canary, or None where the
    keywords are still probed one by one (a server that applies the schema
    in part: the canary's ``const`` may be what it drops)."""
    if engine != SERVER_ENGINE:
        return "inconclusive", "canary failed: constraint not applied"
    if ignores_schema(backend, seed, max_tokens):
        return "ignored", "the server answers the same with and without the schema"
    return None


def server_legend(engines: list[str]) -> str:
    """The server verdicts' meanings, for a report that probed engine "server"."""
    if SERVER_ENGINE not in engines:
        return ""
    return " Engine server: " + "; ".join(f"{k}: {v}" for k, v in SERVER_MEANINGS.items()) + "."


def server_verdict(samples: list[Any], keyword: str) -> tuple[KeywordStatus, str] | None:
    """The verdict on ``samples`` (``ProbeSample``s of one keyword), or None
    when they are all valid and carried: the caller's "enforced" path (which
    may still read logprobs) decides."""
    total = len(samples)
    judged = [s for s in samples if s.parsed and s.error is None]
    if not judged:
        return None  # the caller's inconclusive path lists the reasons
    if len(judged) < total:
        return "inconclusive", f"{total - len(judged)}/{total} outputs could not be read: not all were judged"
    uncarried = [s for s in judged if s.carried is False]
    if uncarried:
        return "inconclusive", (f"{len(uncarried)}/{total} requests did not carry {keyword}: "
                                "the server was not asked to enforce it")
    violating = [s for s in judged if keyword in s.violations]
    if violating:
        return "not enforced", f"{len(violating)}/{total} outputs violate {keyword} (the server applied the schema)"
    elsewhere = sorted({v for s in judged for v in s.violations})
    if elsewhere:
        return "inconclusive", (f"0/{total} outputs violate {keyword}, but outputs violate "
                                f"{', '.join(elsewhere)}: the probed field was not written as the schema "
                                "asks, so the keyword was not tested")
    return None


def server_lines(server: dict[str, Any] | None) -> list[str]:
    """The server as it names itself (engine "server"), for the markdown."""
    if server is None:
        return []
    models = server.get("models")
    listed = ", ".join(map(str, models)) if isinstance(models, list) else str(models)
    # every field is what the server says of itself: literal text, one line
    header = server.get("server_header") or "(none sent)"
    return [
        f"Server: {md_text(str(server.get('base_url')))}; `Server` header {md_text(str(header))}; "
        f"models listed: {md_text(listed) or '(none)'}; structured-output dialect: "
        f"{md_text(str(server.get('dialect') or 'none'))} ({md_text(str(server.get('dialect_choice')))}).",
        "",
    ]
