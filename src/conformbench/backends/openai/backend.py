"""OpenAI-compatible HTTP servers: vLLM, SGLang, llama.cpp's llama-server,
llama-cpp-python's server, Ollama, OpenAI.

Constraints are decoded server-side (engine "server") by sending the JSON
Schema, unchanged, in the request body, where the server's dialect puts it
(``backends.openai.dialects``): a run that names none finds it with the
canary's request (``detect_dialect``); the replay says which and how. A server
that ignores the field is caught by the canary. Several base URLs are a pool
of replicas of one model (``openai/pool.py``).

Requests run concurrently (bounded), with timeouts and exponential backoff on
429, 5xx and connection errors; when retries run out the item gets a result
with ``finish_reason="error"``, unless the last try's connection failed on a
server that had answered (or of a pool): that server is gone (PoolDown once
none is left). A 4xx, or a 5xx whose body is a request validation error, is
not retried: the same request cannot succeed.

Answers are untrusted: a malformed or odd one is said in the result
(``openai/answers.py``); each request has a deadline and a size cap, and no
redirect is followed (``openai/http.py``). A URL with credentials is refused.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Generator
from dataclasses import asdict, dataclass
from functools import partial
from typing import Any, ClassVar

import aiohttp

from conformbench.backends.base import backends
from conformbench.backends.manifest import BackendManifest
from conformbench.backends.openai.answers import parse_completion
from conformbench.backends.openai.dialects import DIALECTS, is_request_validation_error, put_constraint
from conformbench.backends.openai.http import Retryable, ordered_posts, post, retry_after_seconds
from conformbench.backends.openai.manifest import AUTO_DIALECT, ENDPOINTS, MANIFEST
from conformbench.backends.openai.pool import (
    DOWN_AFTER,
    GAVE_UP,
    Bodies,
    Server,
    Slots,
    base_urls,
    check_reachable,
    check_replicas,
    detect_on,
    identify,
    pool_down_error,
    pool_of,
    until_pool_down,
)
from conformbench.backends.runinfo import hardware_info, library_versions
from conformbench.errors import UnsupportedSchemaError, UsageError
from conformbench.records.generation import BackendConfig, GenerationRequest, GenerationResult
from conformbench.records.prompt import raw_prompt_text
from conformbench.records.urls import scrub_url_secrets

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
#: deadline of the GET /models request (run metadata only)
_MODELS_DEADLINE_S = 10.0


@dataclass
class _Counters:
    requests: int = 0
    retries: int = 0
    errors: int = 0
    #: calls that returned an answer (not an error), and the prompt tokens
    #: they took (``generations`` in replays made before)
    model_calls: int = 0
    prompt_tokens_total: int = 0
    #: requests moved to another server of the pool after a broken connection
    moved: int = 0


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
        given = str(self._opts["response_format_dialect"])
        #: the servers, in the order given; a dialect given holds for each
        self.servers: list[Server] = pool_of(base_urls(config.base_url), None if given == AUTO_DIALECT else given)
        #: the first server's URL as stored in replays and reports (scheme, host, port, path)
        self.base_url = self.servers[0].shown
        self.counters = _Counters()
        key = os.environ.get(str(self._opts["api_key_env"]))
        self.auth_headers = {"Authorization": f"Bearer {key}"} if key else {}

    @property
    def pooled(self) -> bool:
        """Two servers or more: each generation records which one made it."""
        return len(self.servers) > 1

    # -- structured-output dialect -------------------------------------------

    @property
    def dialect(self) -> str | None:
        """The servers' dialect (None until given or detected, or while
        the servers of a pool take different ones)."""
        found = {s.dialect for s in self.servers}
        return found.pop() if len(found) == 1 else None

    @dialect.setter
    def dialect(self, value: str | None) -> None:
        for server in self.servers:
            server.dialect = value

    @property
    def dialect_choice(self) -> str:
        if not self.pooled:
            return self.servers[0].dialect_choice
        return "; ".join(f"{s.shown}: {s.dialect or 'none'}, {s.dialect_choice}" for s in self.servers)

    @property
    def dialect_pending(self) -> bool:
        """A dialect to find, or (a pool) a server whose canary was not sent yet."""
        return any(s.dialect is None or (self.pooled and not s.checked) for s in self.servers)

    @property
    def dialect_summary(self) -> str:
        return self.dialect_choice if self.pooled else f"{self.dialect or 'none'}, {self.dialect_choice}"

    def detect_dialect(self, request: GenerationRequest,
                       not_applied: Callable[[GenerationResult], str | None]) -> GenerationResult:
        """Try ``request`` on each server in each dialect (DETECT_ORDER;
        only the given one where one is given) until the server applies the
        constraint; see ``DetectsDialect``. The first server that applies
        none gives the result (its error names it)."""
        result = GenerationResult(text="", finish_reason="error", error="no server tried")
        for server in self.servers:
            result = detect_on(server, request, not_applied, self._generate_one)
            if not_applied(result) is not None:
                if self.pooled:
                    result.error = f"server {server.shown}: {result.error or not_applied(result)}"
                return result
        return result

    # -- the servers serve one model -------------------------------------------

    def check_replicas(self, seed: int) -> None:
        """UsageError, in one line, unless the servers of a pool serve the
        same weights (``pool.check_replicas``). Nothing to check for one server."""
        if self.pooled:
            for server in self.servers:
                self._identify(server)
            check_replicas(self.servers, seed, self._generate_one)

    # -- request bodies ----------------------------------------------------

    def request_body(self, request: GenerationRequest, dialect: str | None = None) -> dict[str, Any]:
        """The exact JSON body sent for ``request`` (constrained in
        ``dialect``, default the servers' own)."""
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
                raise UsageError("the openai backend decodes constraints server-side: use engine 'server', "
                                 f"not {request.constraint.engine!r}")
            if request.constraint.output_format != "json":  # the runner excludes such cells first
                raise UnsupportedSchemaError(
                    "server", f"server-side decoding constrains only json output, not {request.constraint.output_format}")
            chosen = DIALECTS[dialect or self.dialect or _FALLBACK_DIALECT]
            put_constraint(body, chosen, request.constraint, str(self._opts["schema_name"]))
        return body

    # -- generation --------------------------------------------------------

    def generate(self, request: GenerationRequest) -> GenerationResult:
        return self.generate_many([request])[0]

    def generate_many(self, requests: list[GenerationRequest]) -> list[GenerationResult]:
        """Results in request order; up to ``concurrency`` requests in flight per server."""
        return list(self.generate_stream(requests))

    def generate_stream(
        self, requests: list[GenerationRequest]
    ) -> Generator[GenerationResult, None, None]:
        """Results in request order, each as soon as it and all before it
        are in (``StreamsResults``); up to ``concurrency`` requests in flight
        on each server. PoolDown once every server has left the pool (one
        server: once a request's connection failed on its last try)."""
        return self._stream(self.servers, requests)

    def _generate_one(self, server: Server, request: GenerationRequest) -> GenerationResult:
        """``request`` answered by ``server`` (its retries, no other server)."""
        (result,) = self._stream([server], [request])  # the stream runs to its end and closes
        return result

    def _stream(self, servers: list[Server],
                requests: list[GenerationRequest]) -> Generator[GenerationResult, None, None]:
        # usage errors now, before any I/O (not at the first result); each body is encoded
        # once per dialect, and the text sent is what a constrained result records as its engine input
        bodies = [Bodies(r, self.request_body) for r in requests]
        slots = Slots(servers, self.config.concurrency)
        jobs = [partial(self._post_with_retries, b, slots) for b in bodies]
        return until_pool_down(ordered_posts(
            jobs, self.config.concurrency * len(servers), self.config.timeout_s, self.auth_headers))

    def endpoint(self, path: str) -> str:
        """The request URL of ``path`` under the (first) base URL, its query
        kept (credentials included: only the stored form drops them)."""
        return self.servers[0].endpoint(path)

    @property
    def completion_path(self) -> str:
        return "chat/completions" if self._opts["endpoint"] == "chat" else "completions"

    async def _post_with_retries(self, bodies: Bodies, pool: Slots,
                                 session: aiohttp.ClientSession) -> GenerationResult:
        start = time.perf_counter()
        retries, moves, last = 0, 0, None
        while True:
            server = await pool.take(avoid=last)
            if server is None:
                return self._error(pool_down_error(pool.servers), None, start, None)
            text = bodies.text(server.dialect)
            self.counters.requests += 1
            server.counters.requests += 1
            try:
                result = await self._post_once(session, server, text.encode("utf-8"), bodies.stop)
            except Retryable as exc:
                last = server
                if exc.connection:
                    await pool.failed(server, str(exc))
                    if len(pool.servers) > 1 and moves < len(pool.servers) * DOWN_AFTER:
                        moves += 1
                        server.counters.moved_away += 1
                        self.counters.moved += 1
                        continue  # to another server, at once, without spending a retry
                if retries < self.config.max_retries:
                    retries += 1
                    self.counters.retries += 1
                    server.counters.retries += 1
                    await asyncio.sleep(self._backoff(retries - 1, exc))
                    continue
                if exc.connection and (self.pooled or server.counters.model_calls):  # it died
                    await pool.gone(server, retries + moves + 1, str(exc))  # to another, or PoolDown
                    continue
                error = f"{exc} ({GAVE_UP} {retries + moves + 1} attempt(s))"
                return self._error(error, bodies.engine_input(text), start, server)
            except ValueError as exc:  # a non-retryable answer (4xx, malformed JSON)
                return self._error(str(exc), bodies.engine_input(text), start, server)
            finally:
                await pool.give(server)
            server.failures_in_a_row = 0
            result.engine_input = bodies.engine_input(text)
            result.seconds = time.perf_counter() - start
            result.server = server.shown if self.pooled else None
            self._count(result, server)
            return result

    def _count(self, result: GenerationResult, server: Server) -> None:
        if result.finish_reason == "error":  # no text, an unknown finish reason
            self.counters.errors += 1
            server.counters.errors += 1
        else:
            self.counters.model_calls += 1
            server.counters.model_calls += 1
        self.counters.prompt_tokens_total += result.prompt_tokens

    def _backoff(self, attempt: int, exc: Retryable) -> float:
        if exc.retry_after is not None:
            return min(max(exc.retry_after, 0.0), _MAX_BACKOFF_S)
        return float(min(float(self._opts["backoff_s"]) * 2**attempt, _MAX_BACKOFF_S))

    def _error(self, message: str, engine_input: str | None, start: float,
               server: Server | None) -> GenerationResult:
        self.counters.errors += 1
        if server is not None:
            server.counters.errors += 1
        return GenerationResult(
            text="",
            finish_reason="error",
            seconds=time.perf_counter() - start,
            engine_input=engine_input,
            error=scrub_url_secrets(message, *(each.url for each in self.servers))[:1000],  # a last guard
            server=server.shown if server is not None and self.pooled else None,
        )

    async def _post_once(self, session: aiohttp.ClientSession, server: Server, payload: bytes,
                         stop: str | None = None) -> GenerationResult:
        answer = await post(session, server.endpoint(self.completion_path), payload, self.config.timeout_s)
        status = answer.status
        if status >= 500 and is_request_validation_error(status, answer.text):
            raise ValueError(f"HTTP {status} (a request validation error: not retried): "
                             f"{answer.text[:500]}")
        if status == 429 or status >= 500:
            raise Retryable(f"HTTP {status}: {answer.text[:300]}", retry_after_seconds(answer.retry_after))
        if status >= 400:
            hint = " (does base_url end with /v1?)" if status == 404 else ""
            raise ValueError(f"HTTP {status}{hint}: {answer.text[:500]}")
        return parse_completion(answer, self._opts["endpoint"], stop)

    # -- run metadata ------------------------------------------------------

    def metadata(self) -> dict[str, Any]:
        first = self.servers[0]
        self._identify(first)
        facts = {
            "backend": self.name,
            "base_url": self.base_url,
            "model": self.config.model,
            "server_models": first.models if first.models is not None else first.models_error,
            "model_sha256": None,  # the server does not say which file it serves
            "endpoint": self._opts["endpoint"],
            "response_format_dialect": self.dialect,
            "dialect_choice": self.dialect_choice,
            "server_version": first.version,  # what /version says (vLLM, SGLang), else None
            "server_owned_by": first.owned_by,  # which server: /models' owned_by ("vllm", "sglang", ...)
            "concurrency": self.config.concurrency, "timeout_s": self.config.timeout_s,
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
        if not self.pooled:
            del facts["moved"]
            return facts
        for server in self.servers:  # each: what it serves and says it is, and what it did
            self._identify(server)
        return {**facts, "servers": [s.facts() for s in self.servers]}

    def check_reachable(self) -> None:
        """``cannot reach URL: why`` (BackendError) unless a server of the pool answers GET /models."""
        check_reachable(self.servers, self.auth_headers, min(self.config.timeout_s, _MODELS_DEADLINE_S))

    def _identify(self, server: Server) -> None:
        identify(server, self.auth_headers, min(self.config.timeout_s, _MODELS_DEADLINE_S), version=True)

    def server_identity(self) -> dict[str, Any]:
        """What the (first) server says it is, for the audits' reports: the
        model ids it lists, its ``Server`` header, and the structured-output
        dialect (as detected or given)."""
        first = self.servers[0]
        self._identify(first)
        return {"base_url": self.base_url, "models": first.models if first.models is not None else first.models_error,
                "server_header": first.server_header, "dialect": self.dialect, "dialect_choice": self.dialect_choice}

    def close(self) -> None:
        """Nothing to release: each generate_many call owns its client."""

