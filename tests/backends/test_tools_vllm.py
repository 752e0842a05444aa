"""Tool calls through vLLM (``conformbench.testing.VllmServer``, one server
for the module: start-up is minutes here) serving the embedded model with
the shipped tools-aware template (``--chat-template``) and
``--enable-auto-tool-choice --tool-call-parser hermes``: the tools reach
the model, and the tools arms run on BFCL with their report. (The model's
own template, which drops the tools, is named so in
tests/testing/test_vllm_server.py, against that module's server.)"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformbench.backends.locate import tools_template_path
from conformbench.backends.transformers.loading import missing_extra
from conformbench.cli.main import main
from conformbench.records.replay_file import read_replay
from conformbench.testing.vllm_server import VllmServer, vllm_missing

pytestmark = [pytest.mark.slow, pytest.mark.server, pytest.mark.long, pytest.mark.timeout(1800)]


@pytest.fixture(scope="module")
def vllm_tools(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[VllmServer]:
    missing = vllm_missing() or missing_extra()
    if missing:
        pytest.skip(missing)
    folder: Path = request.getfixturevalue("smol_hf_folder")
    log = tmp_path_factory.mktemp("vllm-tools-log") / "server.log"
    args = ("--enable-auto-tool-choice", "--tool-call-parser", "hermes", "--chat-template", str(tools_template_path()),
            "--enforce-eager")  # start-up 0.37x a compiled engine's here (benchmarks/vllm_eager.py)
    with VllmServer(folder, name="smol", log=log, extra_args=args) as server:
        yield server


def test_the_tools_arms_run_on_bfcl_parallel_against_vllm_with_the_shipped_template(
        vllm_tools: VllmServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue #60's line: bfcl-parallel -n 8 under tools[auto] and tools[required]."""
    out = tmp_path / "run"
    code = main(["run", "--backend", "openai", "--base-url", vllm_tools.base_url, "--model", "smol",
                 "--task", "bfcl-parallel", "-n", "8", "--arm", "tools[auto]", "--arm", "tools[required]",
                 "--max-tokens", "128", "--out", str(out), "--quiet"])
    assert code == 0
    replay = read_replay(out / "replay.jsonl")
    tools = replay.models[0].canary["tools"]
    assert tools["reach"]["dropped"] is False and tools["reach"]["with_tools"] > tools["reach"]["without_tools"]
    # measured: under ``required`` the model starts ``<tool_call>`` and the
    # 64-token cap may cut it before the call is whole (the canary's "cut")
    assert tools["canary"]["required"]["forced"] in ("forced", "cut"), tools["canary"]["required"]
    gens = replay.generations
    assert len(gens) == 16 and all(g.finish_reason != "error" for g in gens), [g.error for g in gens]
    assert all(json.loads(g.engine_input or "")["tools"] for g in gens)
    forced = [g for g in gens if g.condition.mode == "required"]  # a call, or cut at the cap while writing one
    assert all(g.tool_calls or g.server_finish_reason == "length" for g in forced), [g.text for g in forced]
    assert any(g.tool_calls for g in forced), [g.content for g in forced]
    report = (out / "report.md").read_text(encoding="utf-8")
    for said in ("call decision", "wrong-but-valid", "arguments valid", "cost on irrelevance"):
        assert said in report, said
