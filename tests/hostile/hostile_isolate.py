"""Run one hostile parse in a forked child so that a parser which falls for
an attack (hangs, eats memory, crashes the interpreter) fails its own test
instead of taking the test session, or the shared machine, down with it.

The child measures wall time and the tracemalloc peak, checks the result,
and sends back a small summary; the parent enforces a wall-clock deadline
and the child runs under an address-space limit.
"""

from __future__ import annotations

import math
import os
import pickle
import resource
import select
import signal
import time
import traceback
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["Outcome", "json_model_problem", "mentions", "run_isolated"]

#: extra address space a child may map beyond what the parent already has
_HEADROOM = 2 * 1024**3
#: most nodes the checks walk before calling a value too large
_MAX_NODES = 2_000_000


@dataclass(frozen=True)
class Outcome:
    ok: bool | None = None
    error: str | None = None
    #: a traceback if parse() raised
    raised: str | None = None
    seconds: float = 0.0
    peak_bytes: int = 0
    #: why the value is outside the JSON data model (None: it is inside)
    model_problem: str | None = None
    #: the secret marker appeared in the value or the error
    leaked: bool = False
    #: the child did not report: timeout, signal, or exit code
    died: str | None = None


def json_model_problem(value: Any) -> str | None:
    """None if ``value`` is strictly JSON data: dicts with str keys, lists,
    UTF-8-encodable str, finite float, int, bool, None. Walks at most
    _MAX_NODES nodes (a shared-reference bomb is reported, not expanded)."""
    stack, seen = [value], 0
    while stack:
        node = stack.pop()
        seen += 1
        if seen > _MAX_NODES:
            return f"more than {_MAX_NODES} nodes"
        if isinstance(node, dict):
            for key, item in node.items():
                if not isinstance(key, str):
                    return f"non-string key {type(key).__name__}"
                stack.extend((key, item))
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, str):
            try:
                node.encode("utf-8")
            except UnicodeEncodeError:
                return "string not encodable as UTF-8 (lone surrogate)"
        elif isinstance(node, float):
            if not math.isfinite(node):
                return f"non-finite number {node}"
        elif node is not None and not isinstance(node, (bool, int)):
            return f"non-JSON type {type(node).__name__}"
    return None


def mentions(value: Any, marker: str) -> bool:
    """Whether any string in ``value`` (keys included) contains ``marker``."""
    stack, seen = [value], 0
    while stack and seen <= _MAX_NODES:
        node = stack.pop()
        seen += 1
        if isinstance(node, str) and marker in node:
            return True
        if isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, (list, tuple)):
            stack.extend(node)
    return False


def _address_space() -> int:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def _call(parse: Callable[[], Any]) -> tuple[Any, str | None]:
    try:
        return parse(), None
    except BaseException:  # noqa: BLE001 - the point is to catch anything
        return None, traceback.format_exc()[-4000:]


def _child(parse: Callable[[], Any], marker: str, write_fd: int) -> None:
    limit = _address_space() + _HEADROOM
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    # timed without tracemalloc (it slows allocation-heavy code many-fold),
    # then measured for memory in a second call
    start = time.process_time()  # CPU time: a busy machine must not fail the bound
    result, raised = _call(parse)
    seconds = time.process_time() - start
    if raised is None:
        tracemalloc.start()
        result, raised = _call(parse)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    else:
        peak = 0
    if result is None:
        outcome = Outcome(raised=raised or "parse() returned None", seconds=seconds, peak_bytes=peak)
    else:
        ok, value, error = result.ok, result.value, result.error
        outcome = Outcome(
            ok=ok,
            error=error,
            seconds=seconds,
            peak_bytes=peak,
            model_problem=json_model_problem(value) if ok else None,
            leaked=mentions(value, marker) or mentions(error, marker),
        )
    os.write(write_fd, pickle.dumps(outcome))


def run_isolated(parse: Callable[[], Any], marker: str, deadline_s: float = 60.0) -> Outcome:
    """Call ``parse`` in a forked child; it must return a ParsedOutput."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: never return into pytest
        os.close(read_fd)
        code = 0
        try:
            _child(parse, marker, write_fd)
        except BaseException:  # noqa: BLE001
            code = 3
        finally:
            os._exit(code)
    os.close(write_fd)
    data = _read_all(read_fd, time.monotonic() + deadline_s)
    os.close(read_fd)
    if data is None:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    if data:
        outcome: Outcome = pickle.loads(data)
        return outcome
    if data is None:
        return Outcome(died=f"no answer within {deadline_s:.0f} s (killed)")
    if os.WIFSIGNALED(status):
        return Outcome(died=f"child killed by signal {os.WTERMSIG(status)}")
    return Outcome(died=f"child exited with code {os.WEXITSTATUS(status)} without a result")


def _read_all(fd: int, deadline: float) -> bytes | None:
    chunks = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            return None
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
