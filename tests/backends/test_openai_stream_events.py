"""The server-sent-events reader of the streamed client
(backends/openai/stream.py ``read_events``) fed the same stream cut into
reads at every place a network can cut it: inside a ``data:`` line, inside
a UTF-8 character, between the ``\\r`` and ``\\n`` of a line end; with a
comment line and a last event that ends without its blank line. Every cut
must give the same answer as the stream read whole."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from typing import Any, cast

import aiohttp
import pytest

from conformbench.backends.openai.stream import StreamedAnswer, read_events


class _Reads:
    """A response body that arrives in the given reads (what
    ``aiohttp.StreamReader.iter_any`` yields from a socket)."""

    def __init__(self, reads: Sequence[bytes]) -> None:
        self.reads = list(reads)

    async def iter_any(self) -> AsyncIterator[bytes]:
        for read in self.reads:
            await asyncio.sleep(0)
            yield read


def _event(piece: str | None, finish: str | None = None, usage: dict[str, int] | None = None) -> dict[str, Any]:
    delta = {} if piece is None else {"content": piece}
    event: dict[str, Any] = {"choices": [{"delta": delta, "finish_reason": finish}]}
    if usage is not None:
        event["usage"] = usage
    return event


def _stream(last_blank_line: bool) -> bytes:
    """A chat stream with CRLF line ends, a comment, multibyte text and a
    last event (the usage) that may lack its closing blank line."""
    pieces = ["{\"städte\": ", "[\"Zürich\", ", "\"東京\", \"🙂\"", "]}"]
    lines = [": keep-alive comment", ""]
    for piece in pieces:
        lines += [f"data: {json.dumps(_event(piece), ensure_ascii=False)}", ""]
    lines += [f"data: {json.dumps(_event(None, 'stop'))}", ""]
    lines += [f"data: {json.dumps(_event(None, usage={'prompt_tokens': 9, 'completion_tokens': 4}))}"]
    text = "\r\n".join(lines) + ("\r\n\r\n" if last_blank_line else "\r\n")
    return text.encode("utf-8")


def _read(reads: Sequence[bytes]) -> StreamedAnswer:
    answer = StreamedAnswer()
    asyncio.run(read_events(cast(aiohttp.StreamReader, _Reads(reads)), answer, 0.0))
    return answer


def _seen(answer: StreamedAnswer) -> tuple[object, ...]:
    return answer.text, answer.chunks, answer.usage, answer.finish_reason, answer.error, tuple(answer.notes)


def test_the_stream_read_whole_gives_the_text_usage_and_finish() -> None:
    answer = _read([_stream(last_blank_line=True)])
    assert answer.text == '{"städte": ["Zürich", "東京", "🙂"]}'
    assert (answer.chunks, answer.finish_reason, answer.error, answer.notes) == (4, "stop", None, [])
    assert answer.usage == {"prompt_tokens": 9, "completion_tokens": 4}


@pytest.mark.parametrize("last_blank_line", [True, False])
def test_every_cut_into_two_reads_gives_the_same_answer(last_blank_line: bool) -> None:
    body = _stream(last_blank_line)
    whole = _seen(_read([body]))
    assert whole[2] is not None  # the last event counts even without its blank line
    for cut in range(1, len(body)):
        assert _seen(_read([body[:cut], body[cut:]])) == whole, f"cut at byte {cut}: {body[cut - 8:cut + 8]!r}"


def test_a_byte_at_a_time_gives_the_same_answer() -> None:
    body = _stream(last_blank_line=False)
    assert _seen(_read([body[i:i + 1] for i in range(len(body))])) == _seen(_read([body]))


def test_the_cuts_named_land_where_they_say() -> None:
    body = _stream(last_blank_line=True)
    inside_data = body.index(b"data: ") + 3
    inside_char = body.index("東".encode()) + 1  # between the bytes of one character
    inside_crlf = body.index(b"\r\n") + 1  # between \r and \n
    for cut in (inside_data, inside_char, inside_crlf):
        answer = _read([body[:cut], body[cut:]])
        assert "東京" in answer.text and "\ufffd" not in answer.text and answer.chunks == 4


def test_a_last_line_without_any_line_end_still_counts() -> None:
    body = _stream(last_blank_line=False).removesuffix(b"\r\n")
    assert _read([body[:-5], body[-5:]]).usage == {"prompt_tokens": 9, "completion_tokens": 4}


def test_data_lines_without_an_event_end_are_bounded_in_memory_not_only_in_bytes() -> None:
    """12 MiB of 2-byte ``data:`` lines (under the 16 MiB byte cap) and no
    blank line: kept as small strings they took about 9x their bytes (over
    100 MB per stream); the reader refuses the event at its bound instead."""
    import tracemalloc

    from conformbench.backends.openai.http import MAX_BODY_BYTES, Refused
    from conformbench.backends.openai.stream import MAX_EVENT_CHARS

    read = b"data:x\n" * 9362  # 64 KiB a read
    reads = [read] * (12 * 16)
    assert len(read) * len(reads) < MAX_BODY_BYTES
    tracemalloc.start()
    try:
        with pytest.raises(Refused, match="holds over"):
            _read(reads)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * MAX_EVENT_CHARS + 2 * len(read) * 10


def test_notes_are_bounded() -> None:
    answer = _read([b"data: not json\n\n" * 10_000])
    assert len(answer.notes) == 3
