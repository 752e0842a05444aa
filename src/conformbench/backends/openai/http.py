"""The openai backend's HTTP client: concurrent JSON POSTs, answers handed
back in request order as soon as each one and all before it are in.

aiohttp, not httpx: against a server that answers at once, httpx's
connection pool spent ~3 ms of client CPU per request on this machine and
aiohttp ~0.3 ms (benchmarks/http_ceiling.py), and on the cluster path the
client must never be what the run waits on.

Each ``ordered_posts`` call owns its event loop, connection pool and
requests: nothing outlives the iteration, so a backend needs no closing and
leaks no socket when a caller stops early (the generator's ``close``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Generator, Sequence
from dataclasses import dataclass
from typing import TypeVar

import aiohttp

__all__ = ["Answer", "Retryable", "ordered_posts", "post"]

T = TypeVar("T")


@dataclass(frozen=True)
class Answer:
    """A server's answer to one POST."""

    status: int
    body: bytes
    retry_after: str | None

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")


class Retryable(Exception):
    """A failure worth another try (connection error, timeout, 429, 5xx)."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def _transport_error(exc: BaseException) -> str:
    """A short, stable name for a transport failure, then aiohttp's detail
    (error records and tests read the name: ConnectError, Timeout...)."""
    if isinstance(exc, aiohttp.ClientConnectorError):
        kind = "ConnectError"
    elif isinstance(exc, TimeoutError):  # aiohttp's timeouts subclass it
        kind = "Timeout"
    elif isinstance(exc, aiohttp.ServerDisconnectedError):
        kind = "Disconnected"
    elif isinstance(exc, aiohttp.ClientPayloadError):
        kind = "TruncatedAnswer"
    else:
        kind = type(exc).__name__
    return f"{kind}: {exc or 'no detail'}"


async def post(session: aiohttp.ClientSession, url: str, payload: bytes) -> Answer:
    """One POST of a JSON payload; Retryable on a transport failure."""
    try:
        async with session.post(url, data=payload, headers={"Content-Type": "application/json"}) as resp:
            body = await resp.read()
            return Answer(resp.status, body, resp.headers.get("Retry-After"))
    except (aiohttp.ClientError, TimeoutError) as exc:
        raise Retryable(_transport_error(exc)) from None


def _session(concurrency: int, timeout_s: float, headers: dict[str, str]) -> aiohttp.ClientSession:
    # timeout_s bounds each wait for the server (connect, then every read),
    # not the whole answer: a long generation that streams nothing still
    # answers within it only if the server is alive (as httpx's read timeout)
    timeout = aiohttp.ClientTimeout(total=None, connect=min(timeout_s, 10.0), sock_read=timeout_s)
    connector = aiohttp.TCPConnector(limit=concurrency, limit_per_host=concurrency)
    return aiohttp.ClientSession(timeout=timeout, headers=headers, connector=connector,
                                 raise_for_status=False)


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
