"""conformbench.testing.stop_process on real child processes: one that ends
on SIGTERM, one that ignores it (killed once the grace is over), one that
has exited already, and a process group whose leader ends on SIGTERM while
a child of it ignores SIGTERM (the group's SIGKILL ends that child too)."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import IO, Any

import pytest

from conformbench.testing import stop_process

GRACE_S = 0.5
#: how long a child may take to start python and say it is ready (a loaded 2-core machine)
READY_S = 60.0
ON_TERM_EXIT_3 = "import signal, sys\nsignal.signal(signal.SIGTERM, lambda *_: sys.exit(3))\n"
IGNORE_TERM = "import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
READY_THEN_SLEEP = "print('ready', flush=True)\nimport time\ntime.sleep(120)\n"
#: a group leader that ends on SIGTERM, with a child that ignores it; the
#: child holds the leader's stdout open and prints its pid
LEADER = ("import subprocess, sys, time\n"
          f"kid = subprocess.Popen([sys.executable, '-c', {IGNORE_TERM + READY_THEN_SLEEP!r}])\n"
          "print(kid.pid, flush=True)\ntime.sleep(120)\n")


def _line(pipe: IO[bytes] | None, within_s: float = READY_S) -> bytes:
    """The next line ``pipe`` (unbuffered, so select sees every byte not
    yet read) gives within ``within_s`` (b'' at its end)."""
    assert pipe is not None
    ready, _, _ = select.select([pipe], [], [], within_s)
    assert ready, f"nothing on the child's stdout within {within_s} s"
    return pipe.readline()


@pytest.fixture
def started() -> Iterator[Any]:
    """Start ``python -c CODE`` (stdout a pipe) and wait for its first
    line; every child is killed, with its group, at teardown."""
    children: list[subprocess.Popen[bytes]] = []

    def start(code: str, **popen: Any) -> tuple[subprocess.Popen[bytes], bytes]:
        proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, bufsize=0, **popen)
        children.append(proc)
        return proc, _line(proc.stdout)

    yield start
    for proc in children:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        assert proc.stdout is not None
        proc.stdout.close()


def test_a_child_that_honours_sigterm_ends_without_the_grace(started: Any) -> None:
    proc, line = started(ON_TERM_EXIT_3 + READY_THEN_SLEEP)
    assert line == b"ready\n"
    begun = time.monotonic()
    assert stop_process(proc, grace_s=30.0) == 3  # its own handler's exit status: SIGTERM, not SIGKILL
    assert time.monotonic() - begun < 30.0 and proc.returncode == 3


def test_a_child_that_ignores_sigterm_is_killed_after_the_grace(started: Any) -> None:
    proc, line = started(IGNORE_TERM + READY_THEN_SLEEP)
    assert line == b"ready\n"
    begun = time.monotonic()
    assert stop_process(proc, grace_s=GRACE_S) == -signal.SIGKILL
    elapsed = time.monotonic() - begun
    assert GRACE_S <= elapsed < GRACE_S + 30.0, elapsed


@pytest.mark.parametrize("reaped", [True, False], ids=["reaped", "not-yet-reaped"])
def test_a_child_that_exited_already_gives_its_status(started: Any, reaped: bool) -> None:
    proc, line = started("print('bye', flush=True)\nraise SystemExit(4)\n")
    assert line == b"bye\n"
    if reaped:
        proc.wait()
    else:
        assert _line(proc.stdout) == b""  # its stdout closed: it has exited (a zombie until reaped)
    begun = time.monotonic()
    assert stop_process(proc, grace_s=30.0) == 4
    assert time.monotonic() - begun < 30.0


def test_a_group_is_killed_whole_even_where_its_leader_ended_on_sigterm(started: Any) -> None:
    proc, first = started(LEADER, start_new_session=True)
    lines = sorted([first, _line(proc.stdout)])  # the child's pid and its "ready", in either order
    assert lines[1] == b"ready\n" and lines[0].strip().isdigit()  # the child ignores SIGTERM from here on
    ended = False
    try:
        assert stop_process(proc, grace_s=GRACE_S, group=True) == -signal.SIGTERM  # the leader honoured it
        ended = _line(proc.stdout, within_s=30.0) == b""  # the child's end of the pipe closed: it is dead
        assert ended
    finally:
        if not ended:  # the child may live on: its group still exists, so its id is still that group's
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_group_refuses_a_child_that_does_not_lead_its_own_group(started: Any) -> None:
    proc, _ = started(READY_THEN_SLEEP)  # in this process's group
    with pytest.raises(ValueError, match="does not lead its own process group"):
        stop_process(proc, grace_s=GRACE_S, group=True)
    assert proc.poll() is None  # nothing was signalled


def test_a_negative_grace_is_refused(started: Any) -> None:
    proc, _ = started(READY_THEN_SLEEP)
    with pytest.raises(ValueError, match="grace_s must be >= 0"):
        stop_process(proc, grace_s=-1.0)
    assert proc.poll() is None


def test_a_reaped_leaders_reused_pid_is_not_signalled(started: Any) -> None:
    """The leader exited and was reaped, its group emptied, and the kernel
    gave its pid to another group's leader (simulated: the Popen's pid set
    to a live session leader this test started): that group is another's,
    so neither signal reaches it."""
    other, line = started(READY_THEN_SLEEP, start_new_session=True)
    assert line == b"ready\n"
    dead, bye = started("print('bye', flush=True)\nraise SystemExit(4)\n", start_new_session=True)
    assert bye == b"bye\n" and dead.wait() == 4
    dead.pid = other.pid  # what a reused number looks like from here
    assert stop_process(dead, grace_s=GRACE_S, group=True) == 4
    assert other.poll() is None  # never signalled
