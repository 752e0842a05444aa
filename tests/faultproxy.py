"""A small fault-injecting HTTP/1.1 proxy for tests.

It forwards requests to a real upstream server on the loopback interface and,
following a :class:`FaultPlan`, answers some of them itself: an error status,
a delay, a hang (the client's timeout fires), a dropped connection, a response
cut off half-way, or the whole proxy going down after N requests (as if the
server had died) until :meth:`FaultProxy.revive` brings it back.

Why a proxy rather than a fake server: the backend under test then talks to
the real server for every request the plan lets through, so the answers it
records are real model output, and only the faults are synthetic.

Each request gets its own upstream connection (``Connection: close`` is forced
both ways) so that a fault applies to exactly one request. Only loopback
addresses are accepted, every read is bounded in size, and every wait is
bounded in time.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, Self
from urllib.parse import urlsplit

__all__ = ["PASS", "Fault", "FaultPlan", "FaultProxy", "ProxyEvent"]

FaultKind = Literal["pass", "status", "delay", "hang", "drop", "truncate"]

_MAX_HEAD = 64 * 1024
_MAX_BODY = 64 * 1024 * 1024
_CHUNK = 64 * 1024


@dataclass(frozen=True)
class Fault:
    """What the proxy does with one request.

    pass: forward it.  status: answer ``status`` with ``body`` (default: a
    JSON error object) without forwarding; with status 200 and a crafted body
    this plays a server that answers nonsense.  delay: wait ``seconds`` then forward.  hang: read the
    request and answer nothing for ``seconds`` (then drop the connection).
    drop: close the connection without answering.  truncate: forward, relay
    only the first ``keep_bytes`` bytes of the answer, then close.
    """

    kind: FaultKind = "pass"
    status: int = 500
    seconds: float = 0.0
    keep_bytes: int = 64
    body: str | None = None


PASS = Fault("pass")


@dataclass(frozen=True)
class FaultPlan:
    """Faults by request number (0-based): ``script[i]`` for request i, then
    ``then`` for every later request. After ``kill_after`` requests have been
    answered the proxy goes down: open connections are dropped, new ones are
    refused, and ``on_kill`` (e.g. killing the upstream process) is called."""

    script: tuple[Fault, ...] = ()
    then: Fault = PASS
    kill_after: int | None = None
    #: when set, only requests whose path contains it are numbered and get
    #: faults (e.g. "/chat/completions"); others pass through uncounted
    only_path: str | None = None

    def fault_for(self, index: int) -> Fault:
        return self.script[index] if index < len(self.script) else self.then


@dataclass(frozen=True)
class ProxyEvent:
    """One request the proxy saw and what happened to it."""

    index: int
    method: str
    path: str
    fault: FaultKind
    #: the status the client received (None: no complete answer)
    status: int | None
    #: time.monotonic() when the request had been read (to check backoff)
    received_at: float = 0.0


@dataclass
class _State:
    plan: FaultPlan = field(default_factory=FaultPlan)
    received: int = 0
    events: list[ProxyEvent] = field(default_factory=list)
    killed: bool = False


def _loopback_host(host: str) -> str:
    if host == "localhost":
        return "127.0.0.1"
    try:
        if ipaddress.ip_address(host).is_loopback:
            return host
    except ValueError:
        pass
    raise ValueError(f"faultproxy only talks to loopback addresses, not {host!r}")


class _BadRequest(Exception):
    pass


@dataclass(frozen=True)
class _Request:
    method: str
    path: str
    head: bytes
    body: bytes
    received_at: float


async def _read_request(reader: asyncio.StreamReader) -> _Request | None:
    """One request, with ``Connection: close`` forced; None on a clean EOF."""
    try:
        raw = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if exc.partial:
            raise _BadRequest("truncated request head") from None
        return None
    except asyncio.LimitOverrunError:
        raise _BadRequest("request head too large") from None
    lines = raw.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3:
        raise _BadRequest("malformed request line")
    kept, length = [lines[0]], 0
    for line in lines[1:]:
        name, _, value = line.partition(":")
        key = name.strip().lower()
        if not line or key in ("connection", "keep-alive", "proxy-connection"):
            continue
        if key == "transfer-encoding":
            raise _BadRequest("chunked request bodies are not supported")
        if key == "content-length":
            length = int(value.strip()) if value.strip().isdigit() else -1
        kept.append(line)
    if not 0 <= length <= _MAX_BODY:
        raise _BadRequest("bad or too large Content-Length")
    body = await reader.readexactly(length)
    head = "\r\n".join([*kept, "Connection: close", "", ""]).encode("latin-1")
    return _Request(parts[0], parts[1], head, body, time.monotonic())


def _status_of(first_bytes: bytes) -> int | None:
    line = first_bytes.split(b"\r\n", 1)[0].split(b" ")
    return int(line[1]) if len(line) > 1 and line[1].isdigit() else None


def _error_response(status: int, message: str, text: str | None = None) -> bytes:
    if text is None:
        text = json.dumps({"error": {"message": message, "type": "faultproxy"}})
    body = text.encode("utf-8", "surrogatepass")
    head = (
        f"HTTP/1.1 {status} Injected\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode("latin-1") + body


class FaultProxy:
    """Runs in a background thread with its own event loop.

    Use as a context manager, or call :meth:`start` and :meth:`stop`.
    ``base_url`` is the proxy's address with the upstream URL's path appended.
    """

    def __init__(
        self,
        upstream: str,
        plan: FaultPlan | None = None,
        on_kill: Callable[[], None] | None = None,
        port: int = 0,
        max_wait_s: float = 60.0,
    ) -> None:
        parts = urlsplit(upstream)
        if parts.scheme != "http" or parts.hostname is None or parts.port is None:
            raise ValueError(f"upstream must be http://host:port[/path], not {upstream!r}")
        self._up_host = _loopback_host(parts.hostname)
        self._up_port = parts.port
        self._up_path = parts.path.rstrip("/")
        self._on_kill = on_kill
        self._port = port
        self._max_wait_s = max_wait_s
        self._lock = threading.Condition()
        self._state = _State(plan=plan or FaultPlan())
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        # every connection ever made (accepted, or to upstream), so shutdown can close one whose
        # graceful close was still flushing (else its transport is collected
        # unclosed, a ResourceWarning that pytest turns into a failure)
        self._accepted: list[asyncio.StreamWriter] = []

    # -- control (any thread) -------------------------------------------------

    @property
    def port(self) -> int:
        return self._port

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._port}{self._up_path}"

    @property
    def events(self) -> list[ProxyEvent]:
        with self._lock:
            return list(self._state.events)

    @property
    def killed(self) -> bool:
        with self._lock:
            return self._state.killed

    def wait_for_events(self, count: int, timeout: float = 10.0) -> list[ProxyEvent]:
        """The events once at least ``count`` requests are finished (a client
        can see its answer a moment before the proxy logs it)."""
        with self._lock:
            self._lock.wait_for(lambda: len(self._state.events) >= count, timeout)
            return list(self._state.events)

    def set_plan(self, plan: FaultPlan, reset_count: bool = True) -> None:
        """Replace the plan; request numbering restarts at 0 by default."""
        with self._lock:
            self._state.plan = plan
            if reset_count:
                self._state.received = 0

    def start(self) -> Self:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run_loop, name="faultproxy", daemon=True)
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._listen(), self._loop).result(timeout=10)
        return self

    def stop(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        asyncio.run_coroutine_threadsafe(self._shutdown(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()
        self._loop = self._thread = None

    def kill(self) -> None:
        """Go down now, as ``kill_after`` would (without calling on_kill)."""
        if self._loop is not None:
            asyncio.run_coroutine_threadsafe(self._go_down(), self._loop).result(timeout=10)

    def revive(self, plan: FaultPlan | None = None) -> None:
        """Listen again on the same port (after a kill), with a new plan."""
        assert self._loop is not None, "start() the proxy first"
        with self._lock:
            self._state.killed = False
            self._state.plan = plan or FaultPlan()
            self._state.received = 0
        asyncio.run_coroutine_threadsafe(self._listen(), self._loop).result(timeout=10)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- event loop side ------------------------------------------------------

    def _run_loop(self) -> None:
        assert self._loop is not None
        asyncio.set_event_loop(self._loop)
        self._loop.run_forever()

    async def _listen(self) -> None:
        self._server = await asyncio.start_server(
            self._accept, "127.0.0.1", self._port, limit=_MAX_HEAD, reuse_address=True
        )
        self._port = self._server.sockets[0].getsockname()[1]

    async def _go_down(self) -> None:
        with self._lock:
            self._state.killed = True
        if self._server is not None:
            self._server.close()
            self._server = None
        for writer in list(self._writers):
            writer.transport.abort()

    async def _shutdown(self) -> None:
        await self._go_down()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for writer in self._accepted:
            writer.transport.abort()  # a no-op on a transport already closed
        self._accepted.clear()
        # connection_lost is scheduled with call_soon: let it run before the
        # loop stops, so every socket is really closed
        for _ in range(3):
            await asyncio.sleep(0)

    def _next(self, request: _Request) -> tuple[int, Fault, bool]:
        """Number the request, pick its fault, say whether to go down after
        (index -1: a request the plan does not look at)."""
        with self._lock:
            plan = self._state.plan
            if plan.only_path is not None and plan.only_path not in request.path:
                return -1, PASS, False
            index = self._state.received
            self._state.received += 1
        down = plan.kill_after is not None and index + 1 >= plan.kill_after
        if plan.kill_after is not None and index >= plan.kill_after:
            return index, Fault("drop"), True
        return index, plan.fault_for(index), down

    def _log(self, index: int, request: _Request, fault: Fault, status: int | None) -> None:
        with self._lock:
            self._state.events.append(
                ProxyEvent(
                    index, request.method, request.path, fault.kind, status, request.received_at
                )
            )
            self._lock.notify_all()

    def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        # A plain function, so asyncio calls it inside connection_made: the
        # connection is known (and closed by _go_down) even if the proxy goes
        # down before its handler task first runs, which would otherwise leave
        # the transport open (a client pooling connections, like aiohttp's, opens
        # them eagerly).
        self._writers.add(writer)
        self._accepted.append(writer)
        asyncio.get_running_loop().create_task(self._handle(reader, writer))

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            # asyncio.timeout, not wait_for: 3.11's wait_for can drop a result
            # that lands as it times out (here a connection, never closed)
            async with asyncio.timeout(self._max_wait_s * 2):
                await self._serve_one(reader, writer)
        except (_BadRequest, ValueError) as exc:
            writer.write(_error_response(400, f"faultproxy: {exc}"))
        except (TimeoutError, OSError, asyncio.IncompleteReadError):
            pass
        finally:
            self._writers.discard(writer)
            if self.killed:
                writer.transport.abort()
            else:
                writer.close()

    async def _serve_one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        request = await _read_request(reader)
        if request is None:
            return
        index, fault, down = self._next(request)
        status = await self._apply(fault, request, writer)
        self._log(index, request, fault, status)
        if down and not self.killed:
            # let this last answer reach the client before the lights go out
            self._writers.discard(writer)
            writer.close()
            await asyncio.wait_for(writer.wait_closed(), self._max_wait_s)
            await self._go_down()
            if self._on_kill is not None:
                await asyncio.get_running_loop().run_in_executor(None, self._on_kill)

    async def _apply(self, fault: Fault, request: _Request, writer: asyncio.StreamWriter) -> int | None:
        if fault.kind == "status":
            writer.write(_error_response(fault.status, "injected fault", fault.body))
            await writer.drain()
            return fault.status
        if fault.kind == "drop":
            return None
        if fault.kind == "hang":
            await asyncio.sleep(min(fault.seconds or self._max_wait_s, self._max_wait_s))
            return None
        if fault.kind == "delay":
            await asyncio.sleep(min(fault.seconds, self._max_wait_s))
        limit = fault.keep_bytes if fault.kind == "truncate" else None
        return await self._forward(request, writer, limit)

    async def _forward(
        self, request: _Request, writer: asyncio.StreamWriter, limit: int | None
    ) -> int | None:
        try:
            async with asyncio.timeout(self._max_wait_s):
                up_reader, up_writer = await asyncio.open_connection(self._up_host, self._up_port)
        except (TimeoutError, OSError):
            writer.write(_error_response(502, "upstream unreachable"))
            await writer.drain()
            return 502
        self._accepted.append(up_writer)  # closed at shutdown whatever happens here
        try:
            up_writer.write(request.head + request.body)
            await up_writer.drain()
            return await self._relay(up_reader, writer, limit)
        finally:
            up_writer.transport.abort()

    async def _relay(
        self, up_reader: asyncio.StreamReader, writer: asyncio.StreamWriter, limit: int | None
    ) -> int | None:
        sent, status = 0, None
        while limit is None or sent < limit:
            chunk = await asyncio.wait_for(up_reader.read(_CHUNK), self._max_wait_s)
            if not chunk:
                break
            if limit is not None:
                chunk = chunk[: limit - sent]
            if status is None:
                status = _status_of(chunk)
            writer.write(chunk)
            await writer.drain()
            sent += len(chunk)
        if limit is not None:
            writer.transport.abort()
            return None
        return status
