"""A stop asked for by a signal (SIGTERM, Ctrl-C), kept where every layer can
see it.

The CLI's signal handler raises the stop where the program is. Python
swallows an exception raised while a finalizer runs (``__del__``, a weakref
callback: "Exception ignored in …") and the command would go on to its end,
so the stop is also noted here, and the loops that write or rescore call
:func:`checkpoint`: a stop that was swallowed lands there, between two
records, as a stop that was not."""

from __future__ import annotations

import signal

__all__ = ["Terminated", "checkpoint", "clear", "first_signal", "note", "stop_exception"]


class Terminated(KeyboardInterrupt):
    """SIGTERM (``kill``, ``timeout``, a scheduler ending a job), raised where
    the program is, as Ctrl-C is: a run stops between two writes of its
    replay and says how to resume, instead of dying mid-line or leaving a
    worker to print a traceback."""


_SIGNALS: list[int] = []


def note(signum: int) -> None:
    """Remember that ``signum`` asked the command to stop."""
    _SIGNALS.append(signum)


def clear() -> None:
    _SIGNALS.clear()


def first_signal() -> int | None:
    """The signal that first asked for a stop, if any."""
    return _SIGNALS[0] if _SIGNALS else None


def stop_exception(signum: int) -> KeyboardInterrupt:
    return Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


def checkpoint() -> None:
    """Raise the stop if one was asked for (a no-op otherwise)."""
    if _SIGNALS:
        raise stop_exception(_SIGNALS[0])
