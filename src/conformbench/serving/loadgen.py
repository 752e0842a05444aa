"""One batch of streamed requests against a server: each sent at its
arrival time (all at once for a closed loop) with at most ``concurrency``
in flight, through the openai backend's HTTP client (its session, bounds
and redaction), each answer handed to ``on_done`` as it ends."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from conformbench.backends.openai.http import client_session
from conformbench.backends.openai.stream import StreamedAnswer, stream_post

__all__ = ["Shot", "run_batch"]


@dataclass(frozen=True)
class Shot:
    """One request of a batch."""

    index: int
    body: bytes
    #: when it may be sent, seconds from the batch's start
    offset_s: float
    #: the cold request's unique schema nonce
    nonce: str | None = None


#: called as each request ends: the shot, when it was sent (seconds from the
#: batch's start) and its answer
OnDone = Callable[[Shot, float, StreamedAnswer], None]


async def _batch(url: str, headers: dict[str, str], shots: Sequence[Shot], concurrency: int, timeout_s: float,
                 on_done: OnDone) -> float:
    limit = asyncio.Semaphore(concurrency)
    async with client_session(concurrency, timeout_s, headers) as session:
        start = time.perf_counter()

        async def one(shot: Shot) -> None:
            wait = start + shot.offset_s - time.perf_counter()
            if wait > 0:  # a closed loop's shots (offset 0) go at once, without a turn of the loop each
                await asyncio.sleep(wait)
            async with limit:
                sent = time.perf_counter() - start
                answer = await stream_post(session, url, shot.body, timeout_s)
            on_done(shot, sent, answer)

        await asyncio.gather(*(one(shot) for shot in shots))
        return time.perf_counter() - start


def run_batch(url: str, headers: dict[str, str], shots: Sequence[Shot], concurrency: int, timeout_s: float,
              on_done: OnDone) -> float:
    """Send ``shots`` and return the batch's wall time (its start to the
    last answer's end)."""
    return asyncio.run(_batch(url, headers, shots, concurrency, timeout_s, on_done))
