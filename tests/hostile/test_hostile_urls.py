"""No query value of --base-url reaches a file or the terminal, whatever
re-encodes it (issue #59, cases 3 and 4).

Redaction used to replace the URL's exact string, but aiohttp and yarl print
a normalised URL (``%2F`` as ``/``, ``%7E`` as ``~``) and a server may echo
the request line: each case below left the key in a record or a report. A
raw-socket server on 127.0.0.1 plays the replies (a reply that is not HTTP,
a 400 quoting the request line) and every file under --out, stdout and
stderr are searched for the secret."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, unquote_plus

import pytest
from test_hostile_surfaces import _cli, _one_line

from conformbench import api
from conformbench.backends.openai.http import Answer
from conformbench.errors import ConformbenchError, UsageError
from conformbench.records.urls import redacted_url, scrub_url_secrets, url_refusal

SECRET = "SECRET"


class RawServer:
    """Answers every request by its first path segment: ``garbage`` (a
    reply no HTTP parser takes), ``echo`` (HTTP 400 quoting the request
    target as sent, percent-decoded and plus-decoded)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.targets: list[str] = []

    def base(self, mode: str) -> str:
        return f"http://127.0.0.1:{self.port}/{mode}/v1"

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        with conn:
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                head += chunk
            target = head.split(b" ", 2)[1].decode("latin-1")
            self.targets.append(target)
            if target.startswith("/garbage/"):
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: not-a-number\r\n\r\n{}")
                return
            body = json.dumps({"error": {"message": f"no such route: {target} ({unquote(target)}; "
                                                   f"{unquote_plus(target)})"}}).encode()
            conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nConnection: close\r\n"
                         + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)

    def __enter__(self) -> RawServer:
        threading.Thread(target=self._serve, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.sock.close()


@pytest.fixture
def server() -> Iterator[RawServer]:
    with RawServer() as raw:
        yield raw


def _spec(url: str) -> dict[str, Any]:
    return {"models": [{"label": "m", "backend": "openai", "model": "m", "base_url": url, "max_retries": 0,
                        "timeout_s": 5}],
            "tasks": [{"name": "gsm8k", "n": 2, "arms": ["unconstrained"]}], "decoding": {"max_tokens": 4},
            "canary": False}


def _nowhere(secret: str, out: Path, *texts: str) -> list[Path]:
    """Every file under ``out``; the secret in none of them nor in ``texts``."""
    for text in texts:
        assert secret not in text, text[-2000:]
    written = [p for p in out.rglob("*") if p.is_file()] if out.exists() else []
    for path in written:
        assert secret.encode() not in path.read_bytes(), path
    return written


def _run(tmp: Path, url: str, capsys: pytest.CaptureFixture[str]) -> tuple[Path, str]:
    """``run`` (in process, its progress on stderr) then ``score``: the
    output folder and everything printed, the errors' lines included."""
    out = tmp / "out"
    said = ""
    try:
        api.run(_spec(url), out=str(out))
    except ConformbenchError as exc:  # no request succeeded: one line, after the replay
        said = str(exc)
    api.score(out / "replay.jsonl", out=out)
    printed = capsys.readouterr()
    return out, said + printed.out + printed.err


def test_a_key_with_percent_2f_and_a_reply_that_is_not_http(tmp_path: Path, server: RawServer,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's case: aiohttp's error quotes the URL with %2f decoded to /,
    which the old exact-string replace missed."""
    out, terminal = _run(tmp_path, server.base("garbage") + "?key=SECRET%2fX&sig=SECRET%7Eabc%20d", capsys)
    written = _nowhere(SECRET, out, terminal)
    replay = (out / "replay.jsonl").read_text(encoding="utf-8")
    # refused before the canary as a server it cannot reach (#58), or error records: either way no secret
    assert '"finish_reason":"error"' in replay or "cannot reach http://127.0.0.1:" in terminal, terminal
    assert any(p.name == "report.md" for p in written)
    assert any("?key=" in t for t in server.targets)  # the whole query was sent


def test_a_server_echoing_the_request_line_has_its_echo_scrubbed(tmp_path: Path, server: RawServer,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's case: `400 no such route: /v1/chat/completions?key=...`
    stored the echo; the body is quoted as sent, decoded and plus-decoded."""
    out, terminal = _run(tmp_path, server.base("echo") + "?key=SECRET%2fX+y&api-version=2024", capsys)
    _nowhere(SECRET, out, terminal)
    replay = (out / "replay.jsonl").read_text(encoding="utf-8")
    assert "no such route: /echo/v1/chat/completions?<redacted>" in replay


@pytest.mark.parametrize("url", [
    "ftp://127.0.0.1:9/v1?key=SECRET%2fZ",  # the mistyped scheme
    "http:\\\\admin:SECRET@127.0.0.1/v1",  # the backslash: urlsplit sees no host, so no '@'
    "http://127.0.0.1:9\\@SECRET.example/v1",  # a variant: a backslash after the host
    "http://admin:SECRET@127.0.0.1:9/v1",
    "http://127.0.0.1:99999/v1?key=SECRET",  # a port that is not a port
    "http:///v1?key=SECRET",  # no host
    "http://127.0.0.1:9/v1?key=SECRET\nX",  # a line break
    "http://127.0.0.1:9/v1 ?key=SECRET",  # a space
])
def test_a_url_urlsplit_cannot_read_as_scheme_and_host_is_refused_unechoed(tmp_path: Path, url: str) -> None:
    out = tmp_path / "out"
    with pytest.raises(UsageError) as exc:
        api.run(_spec(url), out=str(out))
    assert "\n" not in str(exc.value) and "base url" in str(exc.value).lower(), str(exc.value)
    _nowhere(SECRET, out, str(exc.value))
    assert not out.exists()


@pytest.mark.long
def test_engines_cost_refuses_the_backslash_url_in_one_line(tmp_path: Path) -> None:
    done = _cli("engines", "cost", "--base-url", "http:\\\\admin:SECRET@127.0.0.1/v1", "--model", "m",
                "--out", str(tmp_path / "out"))
    _one_line(done, "backslash")
    _nowhere(SECRET, tmp_path / "out", done.stdout, done.stderr)


def test_the_stored_form_is_rebuilt_from_the_parts() -> None:
    assert redacted_url("http://127.0.0.1:8000/v1?key=SECRET%2fX#frag") == "http://127.0.0.1:8000/v1"
    assert redacted_url("HTTP://[::1]:80/v1/?sig=SECRET") == "http://[::1]:80/v1/"
    assert url_refusal("https://host.example/v1?sig=a%2Fb") is None
    for refused in ("http:\\\\admin:SECRET@host/v1", "ftp://h/v1", "http://u:SECRET@h/v1"):
        why = url_refusal(refused)
        assert why is not None and SECRET not in why, why


@pytest.mark.parametrize("echo", [
    "GET /v1/models?key=SECRET/X%20y", "key=SECRET%2FX+y", "SECRET%2fX y", "url='http://h/v1?key=SECRET/X y'",
    "/v1/chat/completions?key=SECRET~1", "key%3DSECRET%252FX%2520y", "SECRET%2fX%20y SECRET/X+y SECRET%2F%58%2520y",
])
def test_every_form_of_a_query_value_is_scrubbed_from_an_echo(echo: str) -> None:
    url = "http://h:1/v1?key=SECRET%2fX%20y&other=SECRET%7E1"
    answer = Answer(400, echo.encode(), None, None, url)
    assert SECRET not in answer.text, answer.text
    assert SECRET not in scrub_url_secrets(echo, url)
