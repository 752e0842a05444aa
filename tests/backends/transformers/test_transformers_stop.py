"""The transformers backend as a user on a busy machine meets it (issue
#44), through the real command in a log (stderr a pipe): a line says the
GGUF is being dequantised before the long silent load; torch's intra- and
inter-op threads follow --threads (recorded in the model record); SIGTERM
during a transformers + outlines run (outlines builds its index in a child
process) stops it with how to resume, no traceback from the child, and what
was written is kept whole (resuming it is tests/runner's)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conformbench.records.replay_file import REPLAY_NAME, read_replay

pytestmark = pytest.mark.slow
pytest.importorskip("transformers", reason="the [hf] extra is not installed")
pytest.importorskip("outlines_core", reason="outlines-core is not installed")


def _command(out: Path) -> list[str]:
    return [sys.executable, "-m", "conformbench.cli.main", "run", "--backend", "transformers", "--task", "gsm8k",
            "-n", "40", "--arm", "constrained[answer]", "--engine", "outlines", "--threads", "1",
            "--json-tokens", "24", "--no-canary", "--out", str(out)]


def _generations(replay: Path) -> int:
    if not replay.exists():
        return 0
    return sum(b'"kind":"generation"' in line for line in replay.read_bytes().splitlines())


@pytest.mark.long
def test_sigterm_stops_cleanly_and_keeps_what_was_written(tmp_path: Path) -> None:
    out = tmp_path / "out"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "COLUMNS": "80", "TERM": "dumb"}
    run = subprocess.Popen(_command(out), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 600
    while _generations(out / REPLAY_NAME) < 1 and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.5)
    assert run.poll() is None, f"the run ended before it could be stopped: {run.communicate()[1][-3000:]}"
    run.send_signal(signal.SIGTERM)  # as `kill PID` or a scheduler does
    _, err = run.communicate(timeout=120)
    assert run.returncode == 143, err[-3000:]
    assert "conformbench: stopped by SIGTERM; rerun the same command to resume" in err
    assert "Traceback" not in err and "EOFError" not in err, err[-3000:]
    loading = next(line for line in err.splitlines() if "loading" in line)
    assert "dequantising the GGUF" in loading  # said before the long silent load
    contents = read_replay(out / REPLAY_NAME)
    model = contents.models[0]
    assert model.label == "smollm2-135m-transformers"
    assert (model.metadata["threads"], model.metadata["interop_threads"]) == (1, 1)
    assert 1 <= len(contents.generations) < 40 and contents.truncated_tail == 0
