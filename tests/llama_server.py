"""llama-cpp-python's own server as the tests start it by hand: on a fixed
port of 127.0.0.1, so that a test can kill it and start it again at one
address (the server-fault and server-pool tests)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LlamaServer:
    """``python -m llama_cpp.server`` on ``model``, its output appended to
    ``log``; ``args`` are the server's own further flags."""

    def __init__(self, model: Path, log: Path, args: Sequence[str] = ()) -> None:
        self.model, self.log, self.args, self.port = model, log, tuple(args), free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> None:
        cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(self.model),
               "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", "1024", *self.args]
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.log.read_text(errors="replace")[-2000:]
            try:
                if httpx.get(f"{self.url}/models", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.25)
        raise AssertionError("llama_cpp.server did not start")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)
