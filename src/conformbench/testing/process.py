"""Stopping a child process for good, as the test and benchmark servers
are stopped: ``stop_process`` asks it to end (SIGTERM), gives it
``grace_s`` seconds, then SIGKILLs it, and reaps it. With ``group=True``
the child leads a process group of its own (started with
``start_new_session=True``) and both signals go to the whole group; the
SIGKILL goes to the group even where the leader ended in time, so that
helpers which outlived it (vLLM's engine and worker processes) end too.
Once the leader is reaped its pid is free: while any process of its group
lives, the kernel gives that number to no new process, so a group signal
is sent only while no process holds the number (else the number is
another's group now, and it is left alone).
"""

from __future__ import annotations

import os
import signal
import subprocess
from typing import Any

__all__ = ["stop_process"]


def stop_process(proc: subprocess.Popen[Any], grace_s: float, *, group: bool = False) -> int:
    """Stop ``proc`` and return its exit status as ``Popen.returncode``
    gives it (``-signal.SIGKILL`` where it had to be killed). A child that
    has exited already is only reaped (with ``group``, what is left of its
    group is still killed). ``group`` on a child that does not lead its
    own group is a ValueError: the signals would reach other processes."""
    if grace_s < 0:
        raise ValueError(f"grace_s must be >= 0, not {grace_s}")
    if not group:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                proc.kill()
        return proc.wait()
    if proc.poll() is None and _group_of(proc.pid) not in (None, proc.pid):
        raise ValueError(f"process {proc.pid} does not lead its own process group "
                         "(start it with start_new_session=True)")
    _signal_group(proc, signal.SIGTERM)
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        pass
    _signal_group(proc, signal.SIGKILL)  # the leader if it lingers, and what outlived it
    return proc.wait()


def _group_of(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except ProcessLookupError:
        return None


def _pid_taken(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process holds it
        return True
    return True


def _signal_group(proc: subprocess.Popen[Any], signum: int) -> None:
    """``signum`` to the group ``proc`` leads; once ``proc`` is reaped, only
    while no process holds its pid (one that does is not ``proc``: the group
    emptied and the number went to another process, maybe another group's leader)."""
    if proc.returncode is not None and _pid_taken(proc.pid):
        return
    try:
        os.killpg(proc.pid, signum)
    except ProcessLookupError:  # nothing of the group is left
        pass
