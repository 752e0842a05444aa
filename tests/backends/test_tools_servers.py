"""Tool calls through real servers on 127.0.0.1, each started once for the
module: llama.cpp's ``llama-server --jinja`` (skipped, saying why, where it
is not built) with the model's own template, which drops the tools (its
differential autoparser finds no tool format in it), and with the shipped
tools-aware template (``--chat-template-file``); and llama-cpp-python's
server with ``--chat_format chatml-function-calling``. On each: whether the
tools reach the model (the prompt is longer with them), the tools canary of
each mode, the tool-argument probe, and a run of the tools arms that
completes with its report. What is asserted is what llama-server (b11434)
was measured to do: docs/runtime.md's server x mode x strict table."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from llama_server import LLAMA_SERVER_MISSING, free_port, llama_server_binary, serve

from conformbench.audits.tool_canary import tool_canary, tools_reach
from conformbench.backends.base import backends
from conformbench.backends.locate import tools_template_path
from conformbench.cli.main import main
from conformbench.records.generation import BackendConfig, DecodingSettings, GenerationRequest
from conformbench.records.prompt import Message, Prompt
from conformbench.records.replay_file import read_replay
from conformbench.records.tool_calls import ToolFunction, ToolMode, ToolRequest

pytestmark = [pytest.mark.slow, pytest.mark.server, pytest.mark.long, pytest.mark.timeout(900)]

WEATHER = ToolFunction("get_weather", "The current weather in a city.", {
    "type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string",
                                                                          "enum": ["celsius", "fahrenheit"]}},
    "required": ["city", "unit"]}, "get_weather")


@pytest.fixture(scope="module")
def llama_jinja(smollm_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    binary = llama_server_binary()
    if binary is None:
        pytest.skip(LLAMA_SERVER_MISSING)
    port = free_port()
    log = tmp_path_factory.mktemp("llama-jinja") / "server.log"
    yield from serve([binary, "--model", str(smollm_path), "--host", "127.0.0.1", "--port", str(port), "--jinja",
                      "--ctx-size", "4096", "--threads", "1", "--parallel", "1"], log, f"http://127.0.0.1:{port}/v1")


@pytest.fixture(scope="module")
def llama_tools(smollm_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """llama-server serving the shipped hermes-style tools template."""
    binary = llama_server_binary()
    if binary is None:
        pytest.skip(LLAMA_SERVER_MISSING)
    port = free_port()
    log = tmp_path_factory.mktemp("llama-tools") / "server.log"
    yield from serve([binary, "--model", str(smollm_path), "--host", "127.0.0.1", "--port", str(port), "--jinja",
                      "--chat-template-file", str(tools_template_path()), "--ctx-size", "4096", "--threads", "1",
                      "--parallel", "1"], log, f"http://127.0.0.1:{port}/v1")


@pytest.fixture(scope="module")
def llama_python_fc(smollm_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    log = tmp_path_factory.mktemp("llama-python-fc") / "server.log"
    yield from serve([sys.executable, "-m", "llama_cpp.server", "--model", str(smollm_path), "--host", "127.0.0.1",
                      "--port", str(port), "--n_ctx", "4096", "--chat_format", "chatml-function-calling"],
                     log, f"http://127.0.0.1:{port}/v1")


def _backend(url: str):
    return backends.get("openai")(BackendConfig(base_url=url, model="m", max_retries=0, timeout_s=300))


def _weather(mode: ToolMode) -> GenerationRequest:
    return GenerationRequest(Prompt((Message("user", "What is the weather in Paris?"),)),
                             DecodingSettings(max_tokens=64), tools=ToolRequest((WEATHER,), mode))


def test_llama_server_drops_the_tools_under_the_models_own_template(llama_jinja: str) -> None:
    """SmolLM2's own template renders no tools: llama-server answers 200 with
    the same prompt, and the reach check says they were dropped."""
    reach = tools_reach(_backend(llama_jinja), _weather(ToolMode("auto")))
    assert reach.dropped and reach.with_tools == reach.without_tools > 0 and reach.error is None, reach


def test_llama_server_shows_the_model_the_tools_and_forces_required(llama_tools: str) -> None:
    """With the shipped template the tools reach the model. ``required``
    (strict or not, the same grammar) lets the model write text before the
    call and forbids it to stop without one, so a reply either calls or is
    cut at the token cap; a named ``tool_choice`` (an object) is ignored with
    a logged warning and served as ``auto``: the model stops without a call."""
    backend = _backend(llama_tools)
    reach = tools_reach(backend, _weather(ToolMode("auto")))
    assert not reach.dropped and reach.with_tools > reach.without_tools > 0, reach
    for mode in (ToolMode("required"), ToolMode("required", strict=True)):
        required = tool_canary(backend, mode, seed=0)
        assert required.error is None and required.forced in ("forced", "cut"), required
    named = tool_canary(backend, ToolMode("named"), seed=0)
    assert named.forced == "not forced" and named.server_finish_reason == "stop", named
    sent = json.loads(backend.generate(_weather(ToolMode("required", strict=True))).engine_input or "{}")
    assert sent["tool_choice"] == "required" and sent["tools"][0]["function"]["strict"] is True


def test_the_tools_arms_run_on_bfcl_parallel_against_llama_server(llama_tools: str, tmp_path: Path) -> None:
    """Issue #60's line, with two function formats: the tools arms, which send
    the functions through tools, run once (16 answers, not 32)."""
    out = tmp_path / "run"
    code = main(["run", "--backend", "openai", "--base-url", llama_tools, "--model", "m", "--task", "bfcl-parallel",
                 "-n", "8", "--arm", "tools[auto]", "--arm", "tools[required]", "--max-tokens", "128",
                 "--function-format", "json", "--function-format", "yaml", "--out", str(out), "--quiet"])
    assert code == 0
    replay = read_replay(out / "replay.jsonl")
    tools = replay.models[0].canary["tools"]
    assert tools["reach"]["dropped"] is False and set(tools["canary"]) == {"auto", "required"}
    gens = replay.generations
    assert {g.condition.mode for g in gens} == {"auto", "required"} and len(gens) == 16
    assert all(not g.condition.axes for g in gens)
    for gen in gens:
        assert gen.tools is not None and gen.tools.tool_choice == gen.condition.mode.split(",")[0]
        assert gen.server_finish_reason is not None and json.loads(gen.engine_input or "")["tools"]
        assert isinstance(json.loads(gen.text), list)
    forced = [g for g in gens if g.condition.mode == "required"]  # a call, or text cut at the cap (no stop)
    assert all(g.tool_calls or g.server_finish_reason == "length" for g in forced), [g.text for g in forced]
    report = (out / "report.md").read_text(encoding="utf-8")
    for said in ("call decision", "wrong-but-valid", "arguments valid", "cost on irrelevance"):
        assert said in report, said
    _a_dropped_check_leaves_the_tools_answers_out(out, tmp_path)


def _a_dropped_check_leaves_the_tools_answers_out(out: Path, tmp_path: Path) -> None:
    """The same replay with its model's check saying the template dropped the
    tools: every tools answer is excluded from scoring, with the reason."""
    lines = []
    for line in (out / "replay.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["kind"] == "model":
            record["canary"]["tools"]["reach"].update(dropped=True, with_tools=40, without_tools=40)
        lines.append(json.dumps(record))
    edited = tmp_path / "dropped.jsonl"
    edited.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["score", str(edited), "--out", str(tmp_path / "scored"), "--quiet"]) == 0
    scored = json.loads((tmp_path / "scored" / "report.json").read_text(encoding="utf-8"))
    text = json.dumps(scored)
    assert "dropped the tools" in text and "never saw the functions" in text


def test_the_tool_argument_probe_runs_per_mode(llama_jinja: str, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "probe"
    code = main(["engines", "probe", "--backend", "openai", "--base-url", llama_jinja, "--model", "m",
                 "--tools", "required", "--tools", "required,strict", "--keyword", "enum,maxLength",
                 "--n-per-keyword", "1", "--out", str(out)])
    assert code == 0
    data = json.loads((out / "engines.json").read_text())
    assert [e["engine"] for e in data["engines"]] == ["tools[required]", "tools[required,strict]"]
    for probed in data["engines"]:
        assert [k["keyword"] for k in probed["keywords"]] == ["enum", "maxLength"]
        assert all(k["status"] in ("enforced", "not enforced", "inconclusive", "refused") for k in probed["keywords"])
    # docs/runtime.md's columns, a row per mode; the terminal names each mode's choice and strict
    md = (out / "engines.md").read_text(encoding="utf-8").splitlines()
    assert "| tool_choice | strict | call forced (canary) | enum | maxLength |" in md
    assert [line.split(" | ")[:2] for line in md if line.startswith("| required |")] == [["| required", "off"],
                                                                                          ["| required", "on"]]
    shown = capsys.readouterr().out
    assert "tool_choice required, strict off" in shown and "tool_choice required, strict on" in shown


def test_llama_cpp_python_takes_named_choices_under_chatml_function_calling(llama_python_fc: str) -> None:
    backend = _backend(llama_python_fc)
    named = backend.generate(_weather(ToolMode("named")))
    assert named.tool_calls and named.tool_calls[0].name == "get_weather", (named.text, named.error)
    canary = tool_canary(backend, ToolMode("named"), seed=0)
    assert canary.forced == "forced" and canary.held is True, canary
