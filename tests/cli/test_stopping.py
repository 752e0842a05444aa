"""A stop that a finalizer swallowed still stops the command (the CI flake of
test_sigterm_and_ctrl_c_say_how_to_resume: a demo sent SIGTERM at 4 s ran to
its end with an "Exception ignored" traceback on stderr)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

# SIGTERM lands while a __del__ runs: Python swallows the Terminated raised there
SCRIPT = textwrap.dedent("""
    import os, signal, sys
    from conformbench.cli.main import _signals_stop
    from conformbench import stopping

    class Finalized:
        def __del__(self):
            os.kill(os.getpid(), signal.SIGTERM)
            total = 0
            for i in range(100_000):  # bytecode after the signal: the handler runs in here
                total += i

    try:
        with _signals_stop():
            Finalized()
            print("reached", flush=True)
            stopping.checkpoint()
            print("went on after the stop", flush=True)
    except KeyboardInterrupt as exc:
        print("stopped by", type(exc).__name__, flush=True)
""")


def test_a_stop_swallowed_by_a_finalizer_lands_at_the_next_checkpoint() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60)
    assert done.stdout.split("\n")[:2] == ["reached", "stopped by Terminated"], done.stdout
    assert "Exception ignored" not in done.stderr and "Traceback" not in done.stderr, done.stderr
