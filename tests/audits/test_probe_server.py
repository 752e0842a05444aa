"""`engines probe` against real OpenAI-compatible servers on 127.0.0.1:
llama-cpp-python's server, and llama.cpp's llama-server where it is built
(skipped with the reason otherwise)."""

from __future__ import annotations

import json

import pytest

from conformbench.cli.main import main

KEYWORDS = ["minimum", "maxLength", "enum"]


def _probe(base_url: str, out) -> dict:
    argv = ["engines", "probe", "--backend", "openai", "--base-url", base_url, "--model", "m",
            "--keyword", ",".join(KEYWORDS), "--n-per-keyword", "2", "--out", str(out)]
    assert main(argv) == 0
    return json.loads((out / "engines.json").read_text())


@pytest.mark.slow
def test_probe_llama_cpp_python_server_keyword_by_keyword(llama_server, tmp_path, capsys):
    data = _probe(llama_server, tmp_path / "probe")
    (probed,) = data["engines"]
    assert (probed["engine"], probed["canary"]) == ("server", "passed")
    status = {k["keyword"]: k["status"] for k in probed["keywords"]}
    assert list(status) == KEYWORDS
    # llama-cpp-python's JSON-Schema-to-GBNF converter has no numeric bounds:
    # the nudged 3 goes through; string lengths and enums are in its grammar
    assert status == {"minimum": "ignored", "maxLength": "enforced", "enum": "enforced"}
    # llama-cpp-python's logprobs are the model's own (taken before the
    # grammar): the canary showed overrides, so every verdict also reads them,
    # and the enforced ones rest on the constraint overriding the model
    assert {k["technique"] for k in probed["keywords"]} == {
        "nudged generation + logprobs (overrides of the model's top token)"}
    by_name = {k["keyword"]: k for k in probed["keywords"]}
    assert all(s["overrides"] > 0 for s in by_name["enum"]["samples"])
    assert "overrode the model's top token in the value of 2/2" in by_name["maxLength"]["detail"]
    assert all(s["overrides"] == 0 for s in by_name["minimum"]["samples"])  # the model's own 3 went through
    # the server as it names itself: its model list, Server header and the
    # dialect the canary found (it refuses OpenAI's json_schema shape)
    server = data["server"]
    assert server["base_url"] == llama_server
    assert isinstance(server["models"], list) and server["models"][0].endswith(".gguf")
    assert server["server_header"] == "uvicorn"
    assert server["dialect"] == "json_object_schema"
    assert "json_schema: error: HTTP 500" in server["dialect_choice"]
    md = (tmp_path / "probe" / "engines.md").read_text()
    assert "| minimum | ignored |" in md and "`Server` header uvicorn" in md
    assert "wrote" in capsys.readouterr().err


@pytest.mark.slow
def test_probe_llama_server_keyword_by_keyword(llama_cpp_server, tmp_path):
    data = _probe(llama_cpp_server, tmp_path / "probe")
    (probed,) = data["engines"]
    assert (probed["engine"], probed["canary"]) == ("server", "passed")
    assert [k["keyword"] for k in probed["keywords"]] == KEYWORDS
    assert {k["status"] for k in probed["keywords"]} <= {"enforced", "ignored", "inconclusive"}
    assert data["server"]["dialect"] in ("json_schema", "json_object_schema")
    assert data["server"]["server_header"]
