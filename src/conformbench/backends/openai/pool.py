"""A pool of OpenAI-compatible servers serving one model: each request goes
to a live server with a free slot (``concurrency`` slots per server), a
server whose connections fail twice in a row leaves the pool, and what each
server is and did is recorded.

One server is a pool of one: its connection failures are retried with
backoff, and once it has answered it leaves (the run stops, PoolDown) when a
request's connection failed on its last try too: it died, and a run against
it could only make error records. One that never answered (a wrong URL, a
server not up yet) stays: its requests end as error records, as before pools.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Generator, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import urlsplit

from conformbench.backends.openai.dialects import DETECT_ORDER
from conformbench.backends.openai.http import Retryable, get_json, get_json_answer
from conformbench.errors import BackendError, UsageError
from conformbench.records.generation import (
    DecodingSettings,
    GenerationRequest,
    GenerationResult,
    redacted_url,
    url_credentials_refusal,
)
from conformbench.records.prompt import CANARY_PROMPT
from conformbench.records.urls import scrub_url_secrets

__all__ = [
    "DOWN_AFTER",
    "GAVE_UP",
    "Bodies",
    "PoolDown",
    "Server",
    "ServerCounters",
    "Slots",
    "base_urls",
    "check_reachable",
    "check_replicas",
    "detect_on",
    "identify",
    "pool_down_error",
    "pool_of",
    "server_version",
    "until_pool_down",
    "weights_refusal",
]

#: how the error of a request whose retries ran out says so
GAVE_UP = "gave up after"
#: connection failures in a row (refused, dropped, cut) after which a server
#: of a pool of two or more is taken out of it for the rest of the run
DOWN_AFTER = 2


class PoolDown(BackendError):
    """Every server of the pool (one or more) has left it: the run stops
    (what was answered is kept; a rerun resumes the rest)."""


@dataclass
class ServerCounters:
    requests: int = 0
    retries: int = 0
    errors: int = 0
    #: answers (not errors) this server made, the checks before the run
    #: (the replica check, the canary) included
    model_calls: int = 0
    #: requests that failed here by a broken connection and went to another server
    moved_away: int = 0


@dataclass
class Server:
    """One server of the pool, as given (``url``, with any query) and as
    stored (``shown``: scheme, host, port and path only)."""

    url: str
    dialect: str | None
    dialect_choice: str
    #: True once the canary's request was answered right in its dialect
    checked: bool = False
    models: list[str] | None = None
    models_error: str | None = None
    #: its model list could not be fetched at all (refused, timed out, 5xx)
    unreachable: bool = False
    server_header: str | None = None
    version: str | None = None
    #: who its /models list says owns the models (``owned_by``: vLLM says "vllm",
    #: SGLang "sglang", OpenAI "openai" or "system"): which server it was
    owned_by: str | None = None
    #: why it left the pool (None: it is in)
    down: str | None = None
    failures_in_a_row: int = 0
    counters: ServerCounters = field(default_factory=ServerCounters)

    @property
    def shown(self) -> str:
        return redacted_url(self.url.rstrip("/"))

    @property
    def root(self) -> str:
        return urlsplit(self.url)._replace(query="", fragment="").geturl().rstrip("/")

    def endpoint(self, path: str) -> str:
        """The request URL of ``path`` under this server's base URL, its
        query kept (credentials included: only ``shown`` drops them)."""
        query = urlsplit(self.url).query
        return f"{self.root}/{path}" + (f"?{query}" if query else "")

    def facts(self) -> dict[str, Any]:
        """What the run's model record says of this server."""
        return {"base_url": self.shown, "models": self.models if self.models is not None else self.models_error,
                "server_header": self.server_header, "version": self.version, "owned_by": self.owned_by,
                "dialect": self.dialect,
                "dialect_choice": self.dialect_choice, "down": self.down, **asdict(self.counters)}


def base_urls(value: str | tuple[str, ...] | list[str] | None) -> tuple[str, ...]:
    """The base URLs of a config's ``base_url`` (one, or a list), each
    checked: a URL with credentials, a blank one or one given twice is
    refused in one line."""
    urls = (value,) if isinstance(value, str) else tuple(value or ())
    if not urls:
        raise UsageError("openai backend needs base_url (e.g. http://127.0.0.1:8000/v1)")
    seen: set[str] = set()
    for url in urls:
        if not isinstance(url, str) or not url.strip():
            raise UsageError(f"base_url must be a URL, not {url!r}")
        refusal = url_credentials_refusal(url)
        if refusal:
            raise UsageError(refusal)
        key = url.strip().rstrip("/")
        if key in seen:
            raise UsageError(f"base_url {redacted_url(key)} is given twice: give each server once")
        seen.add(key)
    return urls


def pool_of(urls: tuple[str, ...], dialect: str | None) -> list[Server]:
    choice = "given" if dialect else "not detected (no constrained request yet)"
    return [Server(url=url, dialect=dialect, dialect_choice=choice) for url in urls]


class Slots:
    """Each live server's free request slots, taken by the request about to
    be sent and given back when its answer is in. Made inside the event loop
    that uses it."""

    def __init__(self, servers: list[Server], per_server: int) -> None:
        self.servers = servers
        self.free = [per_server] * len(servers)
        self._changed = asyncio.Condition()

    async def take(self, avoid: Server | None = None) -> Server | None:
        """The live server with the most free slots (another than ``avoid``
        where one has a free slot), waiting for one; None when none is left."""
        async with self._changed:
            while True:
                live = [i for i, s in enumerate(self.servers) if s.down is None]
                if not live:
                    return None
                ready = [i for i in live if self.free[i] > 0]
                others = [i for i in ready if self.servers[i] is not avoid]
                if others or ready:
                    best = max(others or ready, key=lambda i: self.free[i])
                    self.free[best] -= 1
                    return self.servers[best]
                await self._changed.wait()

    async def give(self, server: Server) -> None:
        async with self._changed:
            self.free[self.servers.index(server)] += 1
            self._changed.notify_all()

    async def gone(self, server: Server, attempts: int, why: str) -> None:
        """A request's connection to ``server`` failed on every try it had
        left (``attempts`` in all): it leaves the pool, whatever its size."""
        if server.down is None:
            server.down = f"its connection failed on the last of {attempts} attempt(s) of a request (last: {why[:200]})"
            async with self._changed:
                self._changed.notify_all()

    async def failed(self, server: Server, why: str) -> None:
        """A connection to ``server`` failed: the second in a row takes it
        out of a pool of two or more (those waiting for a slot look again)."""
        server.failures_in_a_row += 1
        if len(self.servers) > 1 and server.down is None and server.failures_in_a_row >= DOWN_AFTER:
            server.down = f"{DOWN_AFTER} connection failures in a row (last: {why[:200]})"
            async with self._changed:
                self._changed.notify_all()


def weights_refusal(servers: list[Server], answers: list[str]) -> str | None:
    """Why the servers of a pool do not serve the same weights (the model
    ids they list differ, or their greedy answers to one prompt do), or
    None. ``answers``: each server's answer, in pool order."""
    listed = [(s, s.models) for s in servers if s.models is not None]
    if listed and any(sorted(m) != sorted(listed[0][1]) for _, m in listed):
        shown = "; ".join(f"{s.shown} lists {m}" for s, m in listed)
        return (f"the servers of the pool serve different models ({shown}): a pool is replicas of one model; "
                "serve it under one name on each (e.g. --served-model-name, --model_alias)")
    if len(set(answers)) > 1:
        shown = "; ".join(f"{s.shown} answered {a[:60]!r}" for s, a in zip(servers, answers, strict=True))
        return (f"the servers of the pool answer one greedy prompt differently ({shown}): they do not serve "
                "the same weights (or not the same build of them); give the servers of one model only")
    return None


class Bodies:
    """One request's body as JSON text, encoded once per dialect it is sent
    in (the servers of a pool may take different ones); the first is
    encoded at once, so a usage error comes before any I/O."""

    def __init__(self, request: GenerationRequest,
                 body: Callable[[GenerationRequest, str | None], dict[str, Any]]) -> None:
        self._request, self._body = request, body
        self._texts: dict[str | None, str] = {}
        self.text(None)

    def text(self, dialect: str | None) -> str:
        found = self._texts.get(dialect)
        if found is None:
            found = self._texts[dialect] = json.dumps(self._body(self._request, dialect), ensure_ascii=False)
        return found

    @property
    def stop(self) -> str | None:
        """The thinking constraint's stop string (None: no thinking): its
        answer's text is cut after it, never the thinking before it."""
        thinking = self._request.constraint.thinking if self._request.constraint is not None else None
        return thinking.stop if thinking is not None else None

    def engine_input(self, text: str) -> str | None:
        """What a result records as its engine input: the text sent, for a constrained request."""
        return text if self._request.constraint is not None else None


#: how the error of a request that found no server left begins (a pool; one server)
_POOL_DOWN = "every server of the pool is down"
_SERVER_DOWN = "the server is down"


def pool_down_error(servers: list[Server]) -> str:
    if len(servers) == 1:
        return f"{_SERVER_DOWN}: {servers[0].shown}: {servers[0].down}"
    return _POOL_DOWN + " (" + "; ".join(f"{s.shown}: {s.down}" for s in servers) + ")"


def until_pool_down(results: Iterator[GenerationResult]) -> Generator[GenerationResult, None, None]:
    """``results`` until the first that found no server left, then PoolDown
    (closing ``results`` cancels what is still in flight)."""
    given = 0
    try:
        for result in results:
            if result.finish_reason == "error" and (result.error or "").startswith((_POOL_DOWN, _SERVER_DOWN)):
                raise PoolDown(f"{result.error}; {given} answer(s) of this batch were kept, and a rerun resumes "
                               "the rest once a server is back")
            given += 1
            yield result
    finally:
        close = getattr(results, "close", None)
        if close is not None:
            close()


def identify(server: Server, headers: dict[str, str], deadline_s: float, version: bool) -> None:
    """The model ids ``server`` lists and its ``Server`` header (asked
    once: the run's last model record repeats them), or why they could not
    be read; with ``version``, the version it says at /version (vLLM)."""
    if server.models is not None or server.models_error is not None:
        return
    try:
        data, header = get_json_answer(server.endpoint("models"), headers, deadline_s)
        server.models = [scrub_url_secrets(str(m.get("id"))[:200], server.url) for m in data.get("data", [])][:100]
        server.owned_by = _owners(data.get("data", []))
        server.server_header = None if header is None else scrub_url_secrets(header[:200], server.url)
    except (Retryable, ValueError, AttributeError, TypeError, RecursionError) as exc:
        server.models_error = scrub_url_secrets(f"unavailable: {type(exc).__name__}: {str(exc)[:300]}", server.url)
        server.unreachable = isinstance(exc, Retryable)
        return
    if version:
        server.version = server_version(server, headers, deadline_s)


def check_reachable(servers: list[Server], headers: dict[str, str], deadline_s: float) -> None:
    """BackendError ``cannot reach URL: why`` unless a server answers GET
    /models with anything at all (of a pool, at least one: a pool runs on
    without a dead replica), before the canary's request would read a dead
    server as a constraint not applied."""
    failures: list[str] = []
    for server in servers:
        try:
            get_json(server.endpoint("models"), headers, deadline_s)
            return
        except Retryable as exc:  # no connection, or none within the deadline
            failures.append(f"cannot reach {server.shown}: {exc}")
        except ValueError:
            return  # it answered (an HTTP error, a body that is not JSON): reached
    raise BackendError("; ".join(failures))


def _owners(listed: Any) -> str | None:
    """The distinct ``owned_by`` strings of a /models list, joined (None: none said)."""
    owners = [m.get("owned_by") for m in listed[:100] if isinstance(m, dict)] if isinstance(listed, list) else []
    named = list(dict.fromkeys(o[:50] for o in owners if isinstance(o, str) and o))
    return ", ".join(named[:5]) or None


def server_version(server: Server, headers: dict[str, str], deadline_s: float) -> str | None:
    """The version a server says at ``/version`` beside its API root
    (vLLM's, SGLang's), or None where it says none."""
    root = server.root.removesuffix("/v1")
    try:
        data = get_json(f"{root}/version", headers, deadline_s)
    except (Retryable, ValueError):
        return None
    version = data.get("version") if isinstance(data, dict) else None
    return str(version)[:100] if isinstance(version, str | int | float) else None


Send = Callable[[Server, GenerationRequest], GenerationResult]


def detect_on(server: Server, request: GenerationRequest, not_applied: Callable[[GenerationResult], str | None],
              send: Send) -> GenerationResult:
    """Send ``request`` (the canary's) to ``server`` in each dialect
    (DETECT_ORDER; only its own where one was given) until it applies the
    constraint; that dialect is kept, and how it was chosen."""
    tried: list[str] = []
    given = server.dialect if server.dialect_choice == "given" else None
    result = GenerationResult(text="", finish_reason="error", error="no dialect tried")
    for dialect in (given,) if given else DETECT_ORDER:
        server.dialect = dialect
        result = send(server, request)
        why = not_applied(result)
        if why is None:
            server.checked = True
            if not given:
                tried.append(f"{dialect}: applied")
                server.dialect_choice = "detected (" + "; ".join(tried) + ")"
            return result
        tried.append(f"{dialect}: {why}")
        if GAVE_UP in (result.error or ""):
            break  # the server does not answer at all: no dialect will help
    if not given:
        server.dialect = None
        server.dialect_choice = "not detected (" + "; ".join(tried) + ")"
        result.error = "no structured-output dialect was applied: " + "; ".join(tried)
    return result


def check_replicas(servers: list[Server], seed: int, send: Send) -> None:
    """UsageError, in one line, unless the servers (identified) serve the
    same weights: the model ids they list, and their greedy answers to the
    canary's prompt (unconstrained, 16 tokens), must agree."""
    for server in servers:
        if server.unreachable:
            raise UsageError(f"server {server.shown} of the pool does not answer ({server.models_error}): "
                             "give the URLs of running servers only")
    request = GenerationRequest(CANARY_PROMPT, DecodingSettings(max_tokens=16, temperature=0.0, seed=seed))
    answers = []
    for server in servers:
        result = send(server, request)
        if result.finish_reason == "error":
            raise UsageError(f"server {server.shown} of the pool does not answer: {(result.error or '')[:300]}")
        answers.append(result.text)
    refusal = weights_refusal(servers, answers)
    if refusal:
        raise UsageError(refusal)
