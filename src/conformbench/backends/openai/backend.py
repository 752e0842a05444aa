"""OpenAI-compatible HTTP servers: vLLM, SGLang, llama.cpp's llama-server,
llama-cpp-python's server, Ollama, OpenAI.

Constraints are decoded server-side (engine "server") by sending the JSON
Schema, unchanged, in the request body. Servers disagree on where it goes
(the dialects of ``openai_dialects``): a run that names none finds it with
the canary's request (``detect_dialect``), and the replay's model record says
which dialect answered and how it was chosen.

A server that ignores the field decodes unconstrained; the canary catches it.
Requests run concurrently (bounded), with timeouts and exponential backoff on
429, 5xx and connection errors; when retries run out the item gets a result
with ``finish_reason="error"`` instead of an exception. A 4xx, or a 5xx whose
body is a request validation error (llama-cpp-python answers a dialect it
does not take with one), is not retried: the same request cannot succeed.

Answers are untrusted: a malformed one is an error result, and what is odd
about a well-formed one (no text, an unknown finish reason, a token count
that is no count, text over the parse limit, lone surrogates) is said in the
result (``openai/answers.py``). Every request has a total deadline of
``timeout_s``, its answer a size cap, and no redirect is followed
(``openai/http.py``). A base URL holding a user name or password is refused
before anything is sent or stored: the key belongs in ``api_key_env``.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import time
from collections.abc import Callable, Generator
from dataclasses import asdict, dataclass
from functools import partial
from typing import Any, ClassVar
from urllib.parse import urlsplit

import aiohttp

from conformbench.backends.base import backends
from conformbench.backends.manifest import BackendManifest
from conformbench.backends.openai.answers import parse_completion
from conformbench.backends.openai.dialects import DETECT_ORDER, DIALECTS, is_request_validation_error
from conformbench.backends.openai.http import Retryable, get_json_answer, ordered_posts, post
from conformbench.backends.openai.manifest import AUTO_DIALECT, ENDPOINTS, MANIFEST
from conformbench.backends.runinfo import hardware_info, library_versions
from conformbench.errors import UnsupportedSchemaError, UsageError
from conformbench.records.generation import (
    BackendConfig,
    GenerationRequest,
    GenerationResult,
    redacted_url,
    url_credentials_refusal,
)
from conformbench.records.prompt import raw_prompt_text

__all__ = ["AUTO_DIALECT", "ENDPOINTS", "OpenAICompatBackend"]

#: the dialect of constrained requests sent before any detection (API use
#: without a run): the OpenAI shape
_FALLBACK_DIALECT = "json_schema"
_EXTRA_DEFAULTS: dict[str, Any] = {
    "endpoint": "chat",
    "response_format_dialect": AUTO_DIALECT,
    "schema_name": "output",
    "api_key_env": "OPENAI_API_KEY",
    "backoff_s": 0.5,
}
_MAX_BACKOFF_S = 30.0
_GAVE_UP = "gave up after"
#: deadline of the GET /models request (run metadata only)
_MODELS_DEADLINE_S = 10.0


@dataclass
class _Counters:
    requests: int = 0
    retries: int = 0
    errors: int = 0
    #: results that are answers (not errors), and the prompt tokens they took
    generations: int = 0
    prompt_tokens_total: int = 0


def _options(config: BackendConfig) -> dict[str, Any]:
    unknown = sorted(set(config.extra) - set(_EXTRA_DEFAULTS))
    if unknown:
        raise UsageError(f"openai backend: unknown option(s) {unknown}; known: {sorted(_EXTRA_DEFAULTS)}")
    opts = {**_EXTRA_DEFAULTS, **config.extra}
    if opts["endpoint"] not in ENDPOINTS:
        raise UsageError(f"endpoint must be one of {list(ENDPOINTS)}, not {opts['endpoint']!r}")
    if opts["response_format_dialect"] not in (AUTO_DIALECT, *DIALECTS):
        raise UsageError(
            f"response_format_dialect (--dialect) must be one of {[AUTO_DIALECT, *DIALECTS]}, "
            f"not {opts['response_format_dialect']!r}"
        )
    if not config.base_url:
        raise UsageError("openai backend needs base_url (e.g. http://127.0.0.1:8000/v1)")
    refusal = url_credentials_refusal(config.base_url)
    if refusal:
        raise UsageError(refusal)
    if config.concurrency < 1 or config.max_retries < 0 or config.timeout_s <= 0:
        raise UsageError("concurrency must be >= 1, max_retries >= 0 and timeout_s > 0")
    return opts


@backends.register("openai")
class OpenAICompatBackend:

    name: ClassVar[str]
    manifest: ClassVar[BackendManifest] = MANIFEST

    def __init__(self, config: BackendConfig) -> None:
        self.config = config
        self._opts = _options(config)
        url = urlsplit(str(config.base_url))
        self._root = url._replace(query="", fragment="").geturl().rstrip("/")
        #: the query is sent with every request (``?api-version=...``, a key)
        self._query = url.query
        #: the URL as stored in replays and reports: without credential parameters
        self.base_url = redacted_url(str(config.base_url).rstrip("/"))
        self.counters = _Counters()
        key = os.environ.get(str(self._opts["api_key_env"]))
        self._headers = {"Authorization": f"Bearer {key}"} if key else {}
        given = str(self._opts["response_format_dialect"])
        #: None until given or detected
        self.dialect: str | None = None if given == AUTO_DIALECT else given
        #: how the dialect was chosen, for the replay's model record
        self.dialect_choice = "given" if self.dialect else "not detected (no constrained request yet)"
        self._models: list[str] | None = None
        self._server_header: str | None = None

    # -- structured-output dialect -------------------------------------------

    @property
    def dialect_pending(self) -> bool:
        return self.dialect is None

    @property
    def dialect_summary(self) -> str:
        return f"{self.dialect or 'none'}, {self.dialect_choice}"

    def detect_dialect(self, request: GenerationRequest,
                       not_applied: Callable[[GenerationResult], str | None]) -> GenerationResult:
        """Try ``request`` in each dialect (DETECT_ORDER) until the server
        applies the constraint; see ``DetectsDialect``."""
        tried: list[str] = []
        result = GenerationResult(text="", finish_reason="error", error="no dialect tried")
        for dialect in DETECT_ORDER:
            self.dialect = dialect
            result = self.generate(request)
            why = not_applied(result)
            if why is None:
                tried.append(f"{dialect}: applied")
                self.dialect_choice = "detected (" + "; ".join(tried) + ")"
                return result
            tried.append(f"{dialect}: {why}")
            if _GAVE_UP in (result.error or ""):
                break  # the server does not answer at all: no dialect will help
        self.dialect = None
        self.dialect_choice = "not detected (" + "; ".join(tried) + ")"
        result.error = "no structured-output dialect was applied: " + "; ".join(tried)
        return result

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
            if request.constraint.output_format != "json":  # the runner excludes such cells first
                raise UnsupportedSchemaError(
                    "server", f"server-side decoding constrains only json output, not {request.constraint.output_format}")
            dialect = DIALECTS[self.dialect or _FALLBACK_DIALECT]
            dialect.put(body, request.constraint.schema, str(self._opts["schema_name"]))
        return body


    # -- generation --------------------------------------------------------

    def generate(self, request: GenerationRequest) -> GenerationResult:
        return self.generate_many([request])[0]

    def generate_many(self, requests: list[GenerationRequest]) -> list[GenerationResult]:
        """Results in request order; up to ``concurrency`` requests in flight."""
        return list(self.generate_stream(requests))

    def generate_stream(
        self, requests: list[GenerationRequest]
    ) -> Generator[GenerationResult, None, None]:
        """Results in request order, each as soon as it and all before it
        are in (``StreamsResults``); up to ``concurrency`` requests in flight."""
        # usage errors before any I/O; each body is encoded once, and that
        # text is what a constrained result records as its engine input
        texts = [json.dumps(self.request_body(r), ensure_ascii=False) for r in requests]
        jobs = [partial(self._post_with_retries, text.encode("utf-8"),
                        text if r.constraint is not None else None)
                for r, text in zip(requests, texts)]
        return ordered_posts(jobs, self.config.concurrency, self.config.timeout_s, self._headers)

    def endpoint(self, path: str) -> str:
        """The request URL of ``path`` under the base URL, its query kept
        (credentials included: only the stored form drops them)."""
        return f"{self._root}/{path}" + (f"?{self._query}" if self._query else "")

    @property
    def completion_url(self) -> str:
        """Where completions are POSTed (the query, credentials included, kept)."""
        return self._url

    @property
    def auth_headers(self) -> dict[str, str]:
        """The headers every request carries (the API key's, where set)."""
        return dict(self._headers)

    @property
    def _url(self) -> str:
        return self.endpoint("chat/completions" if self._opts["endpoint"] == "chat" else "completions")

    async def _post_with_retries(self, payload: bytes, engine_input: str | None,
                                 session: aiohttp.ClientSession) -> GenerationResult:
        start = time.perf_counter()
        attempts = self.config.max_retries + 1
        for attempt in range(attempts):
            self.counters.requests += 1
            try:
                result = await self._post_once(session, payload)
            except Retryable as exc:
                if attempt + 1 < attempts:
                    self.counters.retries += 1
                    await asyncio.sleep(self._backoff(attempt, exc))
                    continue
                error = f"{exc} ({_GAVE_UP} {attempts} attempt(s))"
                return self._error(error, engine_input, start)
            except ValueError as exc:  # a non-retryable answer (4xx, malformed JSON)
                return self._error(str(exc), engine_input, start)
            result.engine_input = engine_input
            result.seconds = time.perf_counter() - start
            self._count(result)
            return result
        raise AssertionError("unreachable: the loop always returns")

    def _count(self, result: GenerationResult) -> None:
        if result.finish_reason == "error":  # no text, an unknown finish reason
            self.counters.errors += 1
        else:
            self.counters.generations += 1
        self.counters.prompt_tokens_total += result.prompt_tokens

    def _backoff(self, attempt: int, exc: Retryable) -> float:
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

    async def _post_once(self, session: aiohttp.ClientSession, payload: bytes) -> GenerationResult:
        answer = await post(session, self._url, payload, self.config.timeout_s)
        status = answer.status
        if status >= 500 and is_request_validation_error(status, answer.text):
            raise ValueError(f"HTTP {status} (a request validation error: not retried): "
                             f"{answer.text[:500]}")
        if status == 429 or status >= 500:
            raise Retryable(f"HTTP {status}: {answer.text[:300]}", _retry_after(answer.retry_after))
        if status >= 400:
            hint = " (does base_url end with /v1?)" if status == 404 else ""
            raise ValueError(f"HTTP {status}{hint}: {answer.text[:500]}")
        return parse_completion(answer, self._opts["endpoint"])

    # -- run metadata ------------------------------------------------------

    def metadata(self) -> dict[str, Any]:
        return {
            "backend": self.name,
            "base_url": self.base_url,
            "model": self.config.model,
            "server_models": self._server_models(),
            "model_sha256": None,  # the server does not say which file it serves
            "endpoint": self._opts["endpoint"],
            "response_format_dialect": self.dialect,
            "dialect_choice": self.dialect_choice,
            "concurrency": self.config.concurrency,
            "timeout_s": self.config.timeout_s,
            "max_retries": self.config.max_retries,
            "versions": library_versions(),
            "hardware": hardware_info(),
            "loop_stop": {"supported": False},
            # which speed-ups were on (none changes an output): requests in
            # flight, the HTTP client, and records written as answers arrive
            "speedups": {"concurrency": self.config.concurrency, "http_client": "aiohttp",
                         "streamed_results": True},
            **asdict(self.counters),
        }

    def _server_models(self) -> list[str] | str:
        """Model ids the server lists (asked once: the run's last model
        record repeats them), or why they could not be read."""
        if self._models is not None:
            return self._models
        try:
            data, server = get_json_answer(self.endpoint("models"), self._headers,
                                           min(self.config.timeout_s, _MODELS_DEADLINE_S))
            self._models = [str(m.get("id"))[:200] for m in data.get("data", [])][:100]
            self._server_header = None if server is None else server[:200]
        except (Retryable, ValueError, AttributeError, TypeError, RecursionError) as exc:
            return f"unavailable: {type(exc).__name__}: {str(exc)[:300]}"
        return self._models

    def server_identity(self) -> dict[str, Any]:
        """What the server says it is, for the audits' reports: the model ids
        it lists, its ``Server`` header, and the structured-output dialect
        (as detected or given)."""
        models = self._server_models()
        return {"base_url": self.base_url, "models": models, "server_header": self._server_header,
                "dialect": self.dialect, "dialect_choice": self.dialect_choice}

    def close(self) -> None:
        """Nothing to release: each generate_many call owns its client."""


def _retry_after(value: str | None) -> float | None:
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None  # an HTTP date: fall back to exponential backoff
    return seconds if seconds is not None and math.isfinite(seconds) else None
