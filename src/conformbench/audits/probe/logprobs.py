"""The probe's second technique for a server: log-probabilities.

A nudged sample that satisfies a keyword proves little if the model simply
did not try to break it. Where a chat server returns each chosen token's
log-probability with the top alternative *of the model's own distribution*
(llama-cpp-python's server does: the logprobs are taken before the grammar
masks the logits), greedy decoding shows where the constraint stepped in:
a chosen token that is not the model's top token is an *override*. So

* overrides inside the keyword's value: the constraint acted there, and a
  valid value is evidence of enforcement that needs no cooperation;
* no override in any sample's value: the model wrote a valid value on its
  own, and the sample says nothing about the keyword (inconclusive).

Whether a server's logprobs show the model's own choice is checked first
with the canary (``calibrate``): the canary's constant is forced, so such
logprobs must show overrides; a server whose logprobs show none (masked
logprobs, or none at all) keeps the nudged-generation technique alone.

The request is the backend's own body (dialect included) plus ``logprobs``
and ``top_logprobs``, sent through the backend's HTTP client.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

import aiohttp

from conformbench.audits.canary import canary_constant, canary_schema, grammar_request
from conformbench.backends.base import Backend
from conformbench.backends.openai.answers import parse_completion
from conformbench.backends.openai.backend import OpenAICompatBackend
from conformbench.backends.openai.http import Retryable, ordered_posts, post
from conformbench.records.generation import Constraint, GenerationRequest, GenerationResult
from conformbench.records.prompt import CANARY_PROMPT
from conformbench.records.spec import SERVER_ENGINE

__all__ = ["LOGPROBS_TECHNIQUE", "Choice", "calibrate", "generate_with_logprobs", "value_overrides"]

LOGPROBS_TECHNIQUE = "logprobs (overrides of the model's top token)"


@dataclass(frozen=True)
class Choice:
    token: str
    #: the model's top token at this position, before the constraint
    top: str


def _choices(data: Any) -> list[Choice] | None:
    """The per-token choices of a chat answer, or None when it has none."""
    try:
        content = data["choices"][0]["logprobs"]["content"]
        return [Choice(str(t["token"]), str(t["top_logprobs"][0]["token"])) for t in content]
    except (KeyError, IndexError, TypeError):
        return None


def generate_with_logprobs(backend: OpenAICompatBackend,
                           request: GenerationRequest) -> tuple[GenerationResult, list[Choice] | None]:
    """One chat request asking for logprobs; the result as ``generate`` gives
    it, and the choices (None when the server sent none)."""
    # repeat_penalty 1: llama.cpp servers penalise repeats by default after the
    # logprobs are taken, so a penalised token would read as the constraint's override
    body = {**backend.request_body(request), "logprobs": True, "top_logprobs": 1, "repeat_penalty": 1.0}
    payload = json.dumps(body, ensure_ascii=False).encode("utf-8")
    config = backend.config
    key = os.environ.get(str(config.extra.get("api_key_env", "OPENAI_API_KEY")))
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    url = backend.endpoint("chat/completions")

    async def job(session: aiohttp.ClientSession) -> tuple[GenerationResult, list[Choice] | None]:
        try:
            answer = await post(session, url, payload, config.timeout_s)
        except (Retryable, ValueError) as exc:
            return GenerationResult(text="", finish_reason="error", error=str(exc)[:1000]), None
        if answer.status >= 400:
            error = f"HTTP {answer.status}: {answer.text[:500]}"
            return GenerationResult(text="", finish_reason="error", error=error), None
        try:
            data = json.loads(answer.body)
        except (ValueError, RecursionError):
            data = None
        result = parse_completion(answer, "chat")
        result.engine_input = payload.decode("utf-8")  # the body sent, as generate records it
        return result, _choices(data)

    (outcome,) = list(ordered_posts([job], 1, config.timeout_s, headers))
    return outcome


def value_overrides(choices: list[Choice], text: str, field: str | None) -> int:
    """Overrides of what the model wanted to write, at or after the first
    token ending past ``"field":`` (the keyword's value; the whole answer
    when ``field`` is None)."""
    start = 0
    if field is not None:
        key = text.find(f'"{field}"')
        colon = text.find(":", key) if key >= 0 else -1
        start = colon + 1 if colon >= 0 else len(text)
    overrides, end = 0, 0
    for choice in choices:
        end += len(choice.token)
        if end > start and _content_override(choice):
            overrides += 1
    return overrides


def _content_override(choice: Choice) -> bool:
    """The constraint refused what the model wanted to write, not only how
    it spaces it (a grammar's whitespace rules override '\\n ' with ' \"')."""
    wanted, written = "".join(choice.top.split()), "".join(choice.token.split())
    return wanted != "" and written != wanted


def calibrate(backend: Backend, engine: str, seed: int) -> bool:
    """Whether the probe can use logprobs on ``backend``: an HTTP chat server
    (engine "server") whose logprobs show overrides under the canary's
    forced constant."""
    if engine != SERVER_ENGINE or not isinstance(backend, OpenAICompatBackend):
        return False
    if backend.request_body(GenerationRequest(prompt=CANARY_PROMPT)).get("messages") is None:
        return False  # the completions endpoint: another logprobs shape, not read here
    constant = canary_constant(seed)
    request = grammar_request(CANARY_PROMPT, Constraint(canary_schema(constant), engine), 64, seed)
    result, choices = generate_with_logprobs(backend, request)
    return constant in result.text and bool(choices) and value_overrides(choices or [], result.text, "canary") > 0
