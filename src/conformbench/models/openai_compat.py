"""OpenAI-compatible HTTP servers: vLLM, SGLang, llama.cpp's llama-server,
llama-cpp-python's server, Ollama, OpenAI.

Constraints are decoded server-side (engine "server") by sending the JSON
Schema, unchanged, in ``response_format``. Servers disagree on its shape, so
the dialect is a setting:

* ``json_schema`` (OpenAI, vLLM, SGLang, llama-server):
  ``{"type": "json_schema", "json_schema": {"name": ..., "schema": ...}}``
* ``json_object_schema`` (llama-cpp-python's server, which refuses the
  former): ``{"type": "json_object", "schema": ...}``

A server that ignores the field decodes unconstrained; the canary catches it.
Requests run concurrently (bounded), with timeouts and exponential backoff on
429, 5xx and connection errors; when retries run out the item gets a result
with ``finish_reason="error"`` instead of an exception.

Answers are untrusted: a malformed one is an error result, and text that is
not valid Unicode (a lone surrogate escaped in the JSON) has each bad
character replaced with U+FFFD, noted in the result's ``error`` while the
finish reason stays the server's.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
from dataclasses import asdict, dataclass
from typing import Any, ClassVar, Literal

import httpx

from conformbench.errors import UsageError
from conformbench.models.base import backends
from conformbench.models.runinfo import hardware_info, library_versions
from conformbench.records.generation import BackendConfig, GenerationRequest, GenerationResult
from conformbench.records.prompt import raw_prompt_text

__all__ = ["DIALECTS", "ENDPOINTS", "OpenAICompatBackend"]

DIALECTS = ("json_schema", "json_object_schema")
ENDPOINTS = ("chat", "completions")
_EXTRA_DEFAULTS: dict[str, Any] = {
    "endpoint": "chat",
    "response_format_dialect": "json_schema",
    "schema_name": "output",
    "api_key_env": "OPENAI_API_KEY",
    "backoff_s": 0.5,
}
_MAX_BACKOFF_S = 30.0
_SURROGATE = re.compile("[\ud800-\udfff]")


class _Retryable(Exception):
    """A failure worth another try (connection error, timeout, 429, 5xx)."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


@dataclass
class _Counters:
    requests: int = 0
    retries: int = 0
    errors: int = 0


def _options(config: BackendConfig) -> dict[str, Any]:
    unknown = sorted(set(config.extra) - set(_EXTRA_DEFAULTS))
    if unknown:
        raise UsageError(f"openai backend: unknown option(s) {unknown}; known: {sorted(_EXTRA_DEFAULTS)}")
    opts = {**_EXTRA_DEFAULTS, **config.extra}
    if opts["endpoint"] not in ENDPOINTS:
        raise UsageError(f"endpoint must be one of {list(ENDPOINTS)}, not {opts['endpoint']!r}")
    if opts["response_format_dialect"] not in DIALECTS:
        raise UsageError(
            f"response_format_dialect must be one of {list(DIALECTS)}, "
            f"not {opts['response_format_dialect']!r}"
        )
    if not config.base_url:
        raise UsageError("openai backend needs base_url (e.g. http://127.0.0.1:8000/v1)")
    if config.concurrency < 1 or config.max_retries < 0 or config.timeout_s <= 0:
        raise UsageError("concurrency must be >= 1, max_retries >= 0 and timeout_s > 0")
    return opts


@backends.register("openai")
class OpenAICompatBackend:

    name: ClassVar[str]
    def __init__(self, config: BackendConfig) -> None:
        self.config = config
        self._opts = _options(config)
        self.base_url = str(config.base_url).rstrip("/")
        self.counters = _Counters()
        key = os.environ.get(str(self._opts["api_key_env"]))
        self._headers = {"Authorization": f"Bearer {key}"} if key else {}

    # -- request bodies ----------------------------------------------------

    def request_body(self, request: GenerationRequest) -> dict[str, Any]:
        """The exact JSON body sent for ``request``."""
        prompt, settings = request.prompt, request.settings
        body: dict[str, Any] = {} if self.config.model is None else {"model": self.config.model}
        if self._opts["endpoint"] == "chat":
            body["messages"] = [{"role": m.role, "content": m.content} for m in prompt.messages]
            if prompt.assistant_prefix:
                # vLLM/SGLang prefill: the reply continues the last message
                body["messages"].append({"role": "assistant", "content": prompt.assistant_prefix})
                body["continue_final_message"] = True
                body["add_generation_prompt"] = False
        else:
            body["prompt"] = raw_prompt_text(prompt)
        body["max_tokens"] = settings.max_tokens
        body["temperature"] = settings.temperature
        body["seed"] = settings.seed
        if settings.stop:
            body["stop"] = list(settings.stop)
        if request.constraint is not None:
            if request.constraint.engine != "server":
                raise UsageError(
                    f"the openai backend decodes constraints server-side: use engine 'server', "
                    f"not {request.constraint.engine!r}"
                )
            body["response_format"] = self._response_format(request.constraint.schema)
        return body

    def _response_format(self, schema: dict[str, Any]) -> dict[str, Any]:
        if self._opts["response_format_dialect"] == "json_object_schema":
            return {"type": "json_object", "schema": schema}
        return {"type": "json_schema", "json_schema": {"name": self._opts["schema_name"], "schema": schema}}

    # -- generation --------------------------------------------------------

    def generate(self, request: GenerationRequest) -> GenerationResult:
        return self.generate_many([request])[0]

    def generate_many(self, requests: list[GenerationRequest]) -> list[GenerationResult]:
        """Results in request order; up to ``concurrency`` requests in flight."""
        bodies = [self.request_body(r) for r in requests]  # usage errors before any I/O
        return asyncio.run(self._run_all(requests, bodies))

    async def _run_all(
        self, requests: list[GenerationRequest], bodies: list[dict[str, Any]]
    ) -> list[GenerationResult]:
        limit = asyncio.Semaphore(self.config.concurrency)
        timeout = httpx.Timeout(self.config.timeout_s, connect=min(self.config.timeout_s, 10.0))
        async with httpx.AsyncClient(timeout=timeout, headers=self._headers) as client:

            async def one(req: GenerationRequest, body: dict[str, Any]) -> GenerationResult:
                async with limit:
                    return await self._post_with_retries(client, req, body)

            return list(await asyncio.gather(*(one(r, b) for r, b in zip(requests, bodies))))

    @property
    def _url(self) -> str:
        path = "chat/completions" if self._opts["endpoint"] == "chat" else "completions"
        return f"{self.base_url}/{path}"

    async def _post_with_retries(
        self, client: httpx.AsyncClient, request: GenerationRequest, body: dict[str, Any]
    ) -> GenerationResult:
        engine_input = json.dumps(body, ensure_ascii=False) if request.constraint else None
        start = time.perf_counter()
        attempts = self.config.max_retries + 1
        for attempt in range(attempts):
            self.counters.requests += 1
            try:
                result = await self._post_once(client, body)
            except _Retryable as exc:
                if attempt + 1 < attempts:
                    self.counters.retries += 1
                    await asyncio.sleep(self._backoff(attempt, exc))
                    continue
                error = f"{exc} (gave up after {attempts} attempt(s))"
                return self._error(error, engine_input, start)
            except ValueError as exc:  # a non-retryable answer (4xx, malformed JSON)
                return self._error(str(exc), engine_input, start)
            result.engine_input = engine_input
            result.seconds = time.perf_counter() - start
            return result
        raise AssertionError("unreachable: the loop always returns")

    def _backoff(self, attempt: int, exc: _Retryable) -> float:
        if exc.retry_after is not None:
            return min(max(exc.retry_after, 0.0), _MAX_BACKOFF_S)
        return float(min(float(self._opts["backoff_s"]) * 2**attempt, _MAX_BACKOFF_S))

    def _error(self, message: str, engine_input: str | None, start: float) -> GenerationResult:
        self.counters.errors += 1
        return GenerationResult(
            text="",
            finish_reason="error",
            seconds=time.perf_counter() - start,
            engine_input=engine_input,
            error=message[:1000],
        )

    async def _post_once(self, client: httpx.AsyncClient, body: dict[str, Any]) -> GenerationResult:
        try:
            response = await client.post(self._url, json=body)
        except httpx.TransportError as exc:  # connect/read errors and timeouts
            raise _Retryable(f"{type(exc).__name__}: {exc or 'no detail'}") from None
        if response.status_code == 429 or response.status_code >= 500:
            raise _Retryable(
                f"HTTP {response.status_code}: {response.text[:300]}",
                _retry_after(response.headers.get("retry-after")),
            )
        if response.status_code >= 400:
            hint = " (does base_url end with /v1?)" if response.status_code == 404 else ""
            raise ValueError(f"HTTP {response.status_code}{hint}: {response.text[:500]}")
        return _parse_completion(response, self._opts["endpoint"])

    # -- run metadata ------------------------------------------------------

    def metadata(self) -> dict[str, Any]:
        return {
            "backend": self.name,
            "base_url": self.base_url,
            "model": self.config.model,
            "server_models": self._server_models(),
            "model_sha256": None,  # the server does not say which file it serves
            "endpoint": self._opts["endpoint"],
            "response_format_dialect": self._opts["response_format_dialect"],
            "concurrency": self.config.concurrency,
            "timeout_s": self.config.timeout_s,
            "max_retries": self.config.max_retries,
            "versions": library_versions(),
            "hardware": hardware_info(),
            "loop_stop": {"supported": False},
            **asdict(self.counters),
        }

    def _server_models(self) -> list[str] | str:
        """Model ids the server lists, or why they could not be read."""
        try:
            response = httpx.get(f"{self.base_url}/models", headers=self._headers, timeout=10.0)
            response.raise_for_status()
            return [str(m.get("id")) for m in response.json().get("data", [])]
        except (httpx.HTTPError, ValueError, AttributeError) as exc:
            return f"unavailable: {type(exc).__name__}: {exc}"

    def close(self) -> None:
        """Nothing to release: each generate_many call owns its client."""


def _retry_after(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None  # an HTTP date: fall back to exponential backoff


def _parse_completion(response: httpx.Response, endpoint: str) -> GenerationResult:
    """A GenerationResult from a 2xx answer; ValueError if it is malformed."""
    try:
        data = response.json()
        choice = data["choices"][0]
        text = choice["message"]["content"] if endpoint == "chat" else choice["text"]
        if not isinstance(text, str | None):
            raise TypeError(f"the text is a {type(text).__name__}, not a string")
        text, replaced = _SURROGATE.subn("\ufffd", text or "")
        usage = data.get("usage") or {}
        finish: Literal["stop", "length"] = "length" if choice.get("finish_reason") == "length" else "stop"
        note = (f"the server's text held {replaced} character(s) that are not valid Unicode "
                f"(lone surrogates), replaced with U+FFFD") if replaced else None
        return GenerationResult(
            text=text,
            finish_reason=finish,
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            error=note,
        )
    except (ValueError, KeyError, IndexError, TypeError, AttributeError, OverflowError,
            RecursionError) as exc:
        raise ValueError(f"malformed response from the server ({type(exc).__name__}: {exc}): "
                         f"{response.text[:300]}") from None
