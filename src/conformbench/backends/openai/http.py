"""The openai backend's HTTP client: concurrent JSON POSTs, answers handed
back in request order as soon as each one and all before it are in.

aiohttp, not httpx: against a server that answers at once, httpx's
connection pool spent ~3 ms of client CPU per request on this machine and
aiohttp ~0.3 ms (benchmarks/http_ceiling.py), and on the cluster path the
client must never be what the run waits on.

Each ``ordered_posts`` call owns its event loop, connection pool and
requests: nothing outlives the iteration, so a backend needs no closing and
leaks no socket when a caller stops early (the generator's ``close``).

The server is untrusted: every request has a total deadline (a server that
drips a byte at a time cannot hold it longer), the body is read with a cap
on the bytes received and on the bytes they inflate to (a gzip bomb stops
at the cap instead of filling memory), and no redirect is followed (the API
key would go with it to wherever the server points).
"""

from __future__ import annotations

import asyncio
import json
import math
import zlib
from collections.abc import Awaitable, Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urljoin, urlsplit

import aiohttp

from conformbench.records.urls import redacted_url, scrub_url_secrets

__all__ = ["MAX_BODY_BYTES", "Answer", "Refused", "Retryable", "client_session", "get_json", "get_json_answer",
           "ordered_posts", "post", "redirect_refusal", "retry_after_seconds", "transport_error"]

T = TypeVar("T")

#: bytes of an answer, as received and once inflated: well above what an
#: answer within the parse limit (formats/limits.py, 1M characters, up to 6
#: bytes each when JSON-escaped) takes, far below what hurts at --concurrency
MAX_BODY_BYTES = 16 * 1024 * 1024
_CHUNK = 64 * 1024
#: the content codings this client inflates itself (and so asks for)
_CODINGS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": 32 + zlib.MAX_WBITS}
_REDIRECTS = frozenset({301, 302, 303, 307, 308})


@dataclass(frozen=True)
class Answer:
    """A server's answer to one request."""

    status: int
    body: bytes
    retry_after: str | None
    #: the ``Server`` header (what software answered), for the audits' reports
    server: str | None = None
    #: the URL asked (whole): what ``text`` scrubs of its query's values
    url: str = ""

    @property
    def text(self) -> str:
        """The body's first 64 KiB as text for a message (messages quote at
        most 500 characters), every form of the URL's query values scrubbed
        (a server may echo the request line)."""
        return scrub_url_secrets(self.body[:65536].decode("utf-8", errors="replace"), self.url)


class Retryable(Exception):
    """A failure worth another try (connection error, timeout, 429, 5xx)."""

    def __init__(self, message: str, retry_after: float | None = None, connection: bool = False) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        #: the connection failed (refused, dropped, cut mid-answer): the
        #: server may be gone, not just busy
        self.connection = connection


class Refused(ValueError):
    """An answer the client will not take and another try would not change
    (too large, a redirect, a content coding it did not ask for)."""


def _transport_error(exc: BaseException, url: str) -> str:
    """A short, stable name for a transport failure and a detail built from
    the exception's parts, never its text (aiohttp and yarl print the URL
    normalised, its query's key included), scrubbed of the query's values
    all the same (error records and tests read the name: ConnectError,
    Timeout...)."""
    if isinstance(exc, aiohttp.ClientConnectorError):
        why = exc.os_error.strerror if isinstance(exc.os_error, OSError) and exc.os_error.strerror else "refused"
        kind, detail = "ConnectError", f"cannot connect to {redacted_url(url)} ({why})"
    elif isinstance(exc, TimeoutError):  # aiohttp's timeouts subclass it
        kind, detail = "Timeout", f"no answer from {redacted_url(url)} in time"
    elif isinstance(exc, aiohttp.ServerDisconnectedError):
        kind, detail = "Disconnected", "the server closed the connection"
    elif isinstance(exc, aiohttp.ClientPayloadError):
        kind, detail = "TruncatedAnswer", "the answer's body was cut off"
    elif isinstance(exc, aiohttp.ClientResponseError):  # a reply that is not HTTP: its status and reason only
        kind, detail = type(exc).__name__, f"status {exc.status}, {str(exc.message)[:200]}"
    elif isinstance(exc, aiohttp.InvalidURL):
        kind, detail = "InvalidURL", f"the URL {redacted_url(url)} is not one the client can send to"
    elif isinstance(exc, aiohttp.ClientOSError):
        kind, detail = "ConnectionError", exc.strerror or "the connection failed"
    else:
        kind, detail = type(exc).__name__, f"at {redacted_url(url)}"
    return f"{kind}: {scrub_url_secrets(detail, url)}"


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname}" + (f":{parts.port}" if parts.port else "")


def _redirect(resp: aiohttp.ClientResponse, url: str) -> Refused:
    target = urljoin(url, resp.headers.get("Location", ""))
    where = "another origin, " + _origin(target) if _origin(target) != _origin(url) else "the same origin"
    return Refused(f"HTTP {resp.status}: the server redirects to {where}; conformbench follows no "
                   "redirect (the API key would go with it): give the final URL as --base-url")


async def _read_body(resp: aiohttp.ClientResponse) -> bytes:
    """The body, inflated if the server compressed it; Refused past
    MAX_BODY_BYTES received or inflated."""
    coding = resp.headers.get("Content-Encoding", "identity").strip().lower()
    if coding not in ("identity", "", *_CODINGS):
        raise Refused(f"the server answered in content coding {coding[:40]!r}, which was not asked for")
    inflate = zlib.decompressobj(_CODINGS[coding]) if coding in _CODINGS else None
    received, parts, size = 0, [], 0
    async for chunk in resp.content.iter_chunked(_CHUNK):
        received += len(chunk)
        if received > MAX_BODY_BYTES:
            raise Refused(f"the answer is over {MAX_BODY_BYTES} bytes; not read further")
        while chunk:
            # max_length bounds what one call inflates: a bomb never expands past the cap
            out = chunk if inflate is None else inflate.decompress(chunk, MAX_BODY_BYTES + 1 - size)
            chunk = b"" if inflate is None else inflate.unconsumed_tail
            size += len(out)
            if size > MAX_BODY_BYTES:
                raise Refused(f"the answer inflates to over {MAX_BODY_BYTES} bytes "
                              f"(content coding {coding}); not inflated further")
            parts.append(out)
    if inflate is not None:
        try:
            parts.append(inflate.flush(MAX_BODY_BYTES + 1 - size))
        except zlib.error as exc:
            raise Refused(f"the answer's {coding} data is damaged: {exc}") from None
    return b"".join(parts)


async def _request(session: aiohttp.ClientSession, method: str, url: str,
                   payload: bytes | None, deadline_s: float) -> Answer:
    try:
        # the deadline covers the whole exchange, however slowly the bytes come
        async with asyncio.timeout(deadline_s), session.request(
                method, url, data=payload, allow_redirects=False,
                headers={"Content-Type": "application/json"} if payload is not None else None) as resp:
            if resp.status in _REDIRECTS:
                raise _redirect(resp, url)
            body = await _read_body(resp)
            return Answer(resp.status, body, resp.headers.get("Retry-After"), resp.headers.get("Server"), url)
    except zlib.error as exc:
        raise Refused(f"the answer's compressed data is damaged: {exc}") from None
    except TimeoutError:
        raise Retryable(f"Timeout: no complete answer within {deadline_s:g} s") from None
    except aiohttp.ClientError as exc:  # the message may quote the URL: never its key
        broken = isinstance(exc, aiohttp.ClientOSError | aiohttp.ServerDisconnectedError | aiohttp.ClientPayloadError)
        raise Retryable(_transport_error(exc, url), connection=broken) from None


async def post(session: aiohttp.ClientSession, url: str, payload: bytes, deadline_s: float) -> Answer:
    """One POST of a JSON payload; Retryable on a transport failure or past
    the deadline, Refused for an answer that will not be taken."""
    return await _request(session, "POST", url, payload, deadline_s)


def client_session(concurrency: int, timeout_s: float, headers: dict[str, str]) -> aiohttp.ClientSession:
    """The session every request of this client goes through (call it in a
    running loop): at most ``concurrency`` connections, each wait for the
    server bounded by ``timeout_s``, compressed bodies inflated by the caller."""
    return _session(concurrency, timeout_s, headers)


def redirect_refusal(resp: aiohttp.ClientResponse, url: str) -> Refused:
    """The Refused a redirect answer gets (no redirect is followed)."""
    return _redirect(resp, url)


def transport_error(exc: BaseException, url: str) -> str:
    """A transport failure's short name and detail, nothing of the URL's
    query in it (built from parts: ``_transport_error``)."""
    return _transport_error(exc, url)


def _session(concurrency: int, timeout_s: float, headers: dict[str, str]) -> aiohttp.ClientSession:
    # timeout_s bounds each wait for the server (connect, then every read);
    # the total deadline of each request is the caller's (asyncio.timeout)
    timeout = aiohttp.ClientTimeout(total=None, connect=min(timeout_s, 10.0), sock_read=timeout_s)
    connector = aiohttp.TCPConnector(limit=concurrency, limit_per_host=concurrency)
    # inflated here, under a cap (_read_body), not by aiohttp
    sent = {**headers, "Accept-Encoding": ", ".join(("gzip", "deflate"))}
    return aiohttp.ClientSession(timeout=timeout, headers=sent, connector=connector,
                                 raise_for_status=False, auto_decompress=False)


def get_json(url: str, headers: dict[str, str], deadline_s: float) -> Any:
    """GET ``url`` and parse its JSON body, under the same bounds as the
    POSTs; Retryable or ValueError (Refused, a non-2xx status, bad JSON)."""
    return get_json_answer(url, headers, deadline_s)[0]


def get_json_answer(url: str, headers: dict[str, str], deadline_s: float) -> tuple[Any, str | None]:
    """``get_json``'s data and the answer's ``Server`` header."""

    async def fetch() -> tuple[Any, str | None]:
        async with _session(1, deadline_s, headers) as session:
            answer = await _request(session, "GET", url, None, deadline_s)
        if not 200 <= answer.status < 300:
            raise ValueError(f"HTTP {answer.status}")
        return json.loads(answer.body), answer.server  # a JSONDecodeError quotes no body

    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(fetch())
    finally:
        loop.run_until_complete(loop.shutdown_default_executor())
        loop.close()


def ordered_posts(
    jobs: Sequence[Callable[[aiohttp.ClientSession], Awaitable[T]]],
    concurrency: int,
    timeout_s: float,
    headers: dict[str, str],
) -> Generator[T, None, None]:
    """Run ``jobs`` (each given the shared session) with at most
    ``concurrency`` in flight, yielding their results in job order: result
    i as soon as jobs 0..i are done, while later ones go on in the
    background of the next wait. Jobs must not raise."""
    loop = asyncio.new_event_loop()
    tasks: list[asyncio.Task[T]] = []
    session = loop.run_until_complete(_open(concurrency, timeout_s, headers))
    try:
        limit = asyncio.Semaphore(concurrency)

        async def limited(job: Callable[[aiohttp.ClientSession], Awaitable[T]]) -> T:
            async with limit:
                return await job(session)

        tasks = [loop.create_task(limited(job)) for job in jobs]
        for task in tasks:
            yield task.result() if task.done() else loop.run_until_complete(task)
    finally:
        for task in tasks:
            task.cancel()
        loop.run_until_complete(_drain(tasks, session))
        loop.run_until_complete(loop.shutdown_default_executor())
        loop.close()


async def _open(concurrency: int, timeout_s: float, headers: dict[str, str]) -> aiohttp.ClientSession:
    return _session(concurrency, timeout_s, headers)  # aiohttp wants a running loop


async def _drain(tasks: list[asyncio.Task[T]], session: aiohttp.ClientSession) -> None:
    await asyncio.gather(*tasks, return_exceptions=True)
    await session.close()


def retry_after_seconds(value: str | None) -> float | None:
    """A ``Retry-After`` header's seconds (None: absent, an HTTP date, not finite)."""
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None  # an HTTP date: fall back to exponential backoff
    return seconds if seconds is not None and math.isfinite(seconds) else None
