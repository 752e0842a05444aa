"""One streamed chat or text completion (``stream: true``, server-sent
events), timed as it arrives: when the first text came (time to first
token), when the last did, how many events carried text, and the server's
``usage`` where it sends one (``stream_options.include_usage``).

The same bounds as the rest of the client (``openai/http.py``): a total
deadline per request (a server that never sends an event, or drips one a
byte at a time, cannot hold the request longer), a cap on the bytes read,
no redirect followed, and the URL's key never in an error. The stream is
asked for uncompressed; a compressed one is refused. Nothing here raises:
every failure is the answer's ``error``, so what was measured before it is
kept by the caller.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from conformbench.backends.openai.http import MAX_BODY_BYTES, Refused, redirect_refusal, transport_error
from conformbench.records.urls import scrub_url_secrets

__all__ = ["StreamedAnswer", "read_events", "stream_post"]

_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_ERROR_CHARS = 500
#: the most one event's ``data:`` lines may hold, their characters plus a per-line toll of
#: ``_LINE_TOLL`` (a line kept is a string object, about 50 bytes before its text): a stream of
#: tiny ``data:`` lines with no blank line between them is bounded in memory, not only in bytes
MAX_EVENT_CHARS = 1 << 20
_LINE_TOLL = 64
#: notes kept per answer (an event that is not JSON...); the rest are counted
_NOTES = 3
_HEADERS = {"Content-Type": "application/json", "Accept": "text/event-stream", "Accept-Encoding": "identity"}


@dataclass
class StreamedAnswer:
    """What one streamed request gave, with its clock (seconds from the send)."""

    text: str = ""
    status: int | None = None
    #: first event carrying text; None when none did
    first_s: float | None = None
    #: last event carrying text
    last_s: float | None = None
    #: the whole exchange, send to the end of the stream (or the failure)
    total_s: float = 0.0
    #: events that carried text (a token each, on most servers)
    chunks: int = 0
    usage: dict[str, int] | None = None
    finish_reason: str | None = None
    error: str | None = None
    server: str | None = None
    notes: list[str] = field(default_factory=list)


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**31 else None


_decode = json.JSONDecoder().raw_decode


def _loads(data: str) -> Any:
    """``json.loads`` without its per-call wrappers on the usual event (the
    whole line one JSON value); anything else goes through ``json.loads``."""
    try:
        value, end = _decode(data)
        if end == len(data):
            return value
    except ValueError:
        pass
    return json.loads(data)


def _note(answer: StreamedAnswer, note: str) -> None:
    if len(answer.notes) < _NOTES:
        answer.notes.append(note)


def _take_event(data: str, answer: StreamedAnswer, now: float) -> bool:
    """Apply one event's data to ``answer``; True at ``[DONE]``."""
    if data[:1] != "{" and data.strip() == "[DONE]":
        return True
    try:
        event = _loads(data)
    except (ValueError, RecursionError):
        _note(answer, f"an event that is not JSON: {data[:80]!r}")
        return False
    if not isinstance(event, dict):
        return False
    if "error" in event:
        answer.error = f"the server sent an error event: {str(event['error'])[:_ERROR_CHARS]}"
        return True
    usage = event.get("usage")
    if usage is not None and isinstance(usage, dict):
        counts = {k: _count(usage.get(k)) for k in ("prompt_tokens", "completion_tokens")}
        answer.usage = {k: v for k, v in counts.items() if v is not None} or None
    choices = event.get("choices")
    if not choices or not isinstance(choices, list) or not isinstance(choice := choices[0], dict):
        return False
    delta = choice.get("delta")
    piece = delta.get("content") if isinstance(delta, dict) else choice.get("text")
    if piece and isinstance(piece, str):
        answer.text += piece
        answer.chunks += 1
        if answer.first_s is None:
            answer.first_s = now
        answer.last_s = now
    finish = choice.get("finish_reason")
    if finish is not None and isinstance(finish, str):
        answer.finish_reason = finish[:40]
    return False


async def read_events(content: aiohttp.StreamReader, answer: StreamedAnswer, start: float) -> None:
    """Read server-sent events from ``content`` into ``answer`` until
    ``[DONE]``, an error event or the end; Refused past MAX_BODY_BYTES."""
    received, pending, data, held = 0, b"", [], 0
    async for chunk in content.iter_any():
        received += len(chunk)
        if received > MAX_BODY_BYTES:
            raise Refused(f"the stream is over {MAX_BODY_BYTES} bytes; not read further")
        # decoded whole lines at a time: a character may span two reads, but
        # no UTF-8 character holds the byte of a line end
        cut = chunk.rfind(b"\n") + 1
        if not cut:
            pending += chunk
            continue
        whole = chunk if cut == len(chunk) else chunk[:cut]
        lines = (pending + whole if pending else whole).decode("utf-8", errors="replace").split("\n")
        pending = chunk[cut:]
        lines.pop()  # the empty text after the last line end
        now = time.perf_counter() - start
        for line in lines:
            if line.startswith("data:"):
                data.append(line[5:].removeprefix(" ").rstrip("\r"))
                held += len(line) + _LINE_TOLL
                if held > MAX_EVENT_CHARS:
                    raise Refused(f"an event of the stream holds over {MAX_EVENT_CHARS} characters of data "
                                  "lines; not read further")
            elif data and not line.rstrip("\r"):  # a blank line ends the event
                text = data[0] if len(data) == 1 else "\n".join(data)
                data, held = [], 0
                if _take_event(text, answer, now):
                    return
    last = pending.decode("utf-8", errors="replace").rstrip("\r")
    if last.startswith("data:"):  # the stream ended inside its last line: the line is whole all the same
        data.append(last[5:].removeprefix(" "))
    if data:  # the last event, without its closing blank line
        _take_event("\n".join(data), answer, time.perf_counter() - start)


async def _body_text(resp: aiohttp.ClientResponse, url: str) -> str:
    """The start of an error body, scrubbed of the URL's query (a server may echo it)."""
    body = await resp.content.read(64 * 1024)
    return scrub_url_secrets(body.decode("utf-8", errors="replace"), url)[:_ERROR_CHARS]


async def _exchange(session: aiohttp.ClientSession, url: str, payload: bytes, answer: StreamedAnswer,
                    start: float) -> None:
    async with session.post(url, data=payload, allow_redirects=False, headers=_HEADERS) as resp:
        answer.status, answer.server = resp.status, resp.headers.get("Server")
        if resp.status in _REDIRECTS:
            raise redirect_refusal(resp, url)
        if resp.status >= 400:
            hint = " (does --base-url end with /v1?)" if resp.status == 404 else ""
            answer.error = f"HTTP {resp.status}{hint}: {await _body_text(resp, url)}"
            return
        coding = resp.headers.get("Content-Encoding", "identity").strip().lower()
        if coding not in ("identity", ""):
            raise Refused(f"the server compressed the stream ({coding[:40]!r}) though asked not to")
        kind = resp.headers.get("Content-Type", "")
        if "text/event-stream" not in kind:
            answer.error = (f"the server did not stream (Content-Type {kind[:60]!r}, not text/event-stream): "
                            f"{await _body_text(resp, url)}")
            return
        await read_events(resp.content, answer, start)


async def stream_post(session: aiohttp.ClientSession, url: str, payload: bytes, deadline_s: float) -> StreamedAnswer:
    """POST ``payload`` (a body with ``stream: true``) and read its events
    within ``deadline_s`` seconds in all; never raises."""
    answer, start = StreamedAnswer(), time.perf_counter()
    try:
        async with asyncio.timeout(deadline_s):
            await _exchange(session, url, payload, answer, start)
        if answer.error is None and answer.first_s is None:
            answer.error = f"the stream ended without text (finish {answer.finish_reason or 'none'})"
        elif answer.error is None and answer.finish_reason is None:
            answer.error = "the stream was cut: it ended without a finish reason"
    except TimeoutError:
        said = "no text" if answer.first_s is None else f"text for {answer.last_s:.1f} s, then no end"
        answer.error = f"Timeout: {said} within {deadline_s:g} s"
    except Refused as exc:
        answer.error = str(exc)
    except aiohttp.ClientError as exc:
        answer.error = transport_error(exc, url)
    if answer.error is not None:  # an error event may quote the request too
        answer.error = scrub_url_secrets(answer.error, url)
    answer.total_s = time.perf_counter() - start
    return answer
