"""`engines probe` against real OpenAI-compatible servers on 127.0.0.1:
conformbench.testing's scripted server in each way a server misbehaves,
llama-cpp-python's server, and llama.cpp's llama-server where it is built
(skipped with the reason otherwise)."""

from __future__ import annotations

import json

import pytest

from conformbench.cli.main import main
from conformbench.testing import SchemaServer

KEYWORDS = ["minimum", "maxLength", "enum"]


def _probe(base_url: str, out) -> dict:
    argv = ["engines", "probe", "--backend", "openai", "--base-url", base_url, "--model", "m",
            "--keyword", ",".join(KEYWORDS), "--n-per-keyword", "2", "--out", str(out)]
    assert main(argv) == 0
    return json.loads((out / "engines.json").read_text())


def _statuses(data: dict) -> dict[str, str]:
    (probed,) = data["engines"]
    return {k["keyword"]: k["status"] for k in probed["keywords"]}


def test_a_server_that_ignores_response_format_has_every_keyword_ignored(tmp_path):
    with SchemaServer("ignore") as server:
        data = _probe(server.base_url, tmp_path / "probe")
    (probed,) = data["engines"]
    assert probed["canary"] == "failed"
    assert _statuses(data) == dict.fromkeys(KEYWORDS, "ignored")
    assert all("same with and without the schema" in k["detail"] for k in probed["keywords"])


def test_a_server_that_drops_one_keyword_has_it_not_enforced_and_the_rest_enforced(tmp_path):
    with SchemaServer("drop", drop_keyword="maxLength") as server:
        data = _probe(server.base_url, tmp_path / "probe")
        sent = list(server.bodies)
    (probed,) = data["engines"]
    assert probed["canary"] == "passed"
    assert _statuses(data) == {"minimum": "enforced", "maxLength": "not enforced", "enum": "enforced"}
    by_name = {k["keyword"]: k for k in probed["keywords"]}
    # the request carried maxLength: the server dropped it, not conformbench
    assert all(s["carried"] is True for s in by_name["maxLength"]["samples"])
    assert any("maxLength" in json.dumps(body) for body in sent)
    assert "2/2 outputs violate maxLength" in by_name["maxLength"]["detail"]
    md = (tmp_path / "probe" / "engines.md").read_text()
    # with the count it rests on, as a local engine's verdicts have theirs (#58)
    assert "| maxLength | not enforced (2/2 broke) |" in md and "not enforced: the server applied the schema" in md


def test_a_server_that_obeys_everything_has_every_keyword_enforced(tmp_path):
    with SchemaServer("obey") as server:
        data = _probe(server.base_url, tmp_path / "probe")
    assert _statuses(data) == dict.fromkeys(KEYWORDS, "enforced")
    (probed,) = data["engines"]
    assert all(s["carried"] and not s["violations"] for k in probed["keywords"] for s in k["samples"])


def test_enforced_needs_the_probed_field_and_the_keyword_in_the_request():
    """A server answer lacking the probed field (only ``required`` broken)
    or a request that did not carry the keyword is never "enforced"."""
    from conformbench.audits.probe.run import ProbeSample, _classify

    def sample(violations: list[str], carried: bool = True) -> ProbeSample:
        return ProbeSample(prompt="p", text="{}", finish_reason="stop", parsed=True, violations=violations,
                           carried=carried)

    missing = _classify([sample(["required"]), sample([])], "maxLength", "server")
    assert missing[0] == "inconclusive" and "required" in missing[1]
    assert _classify([sample([], carried=False)] * 2, "maxLength", "server")[0] == "inconclusive"
    assert _classify([sample(["maxLength"]), sample([])], "maxLength", "server")[0] == "not enforced"
    assert _classify([sample([])] * 2, "maxLength", "server")[0] == "enforced"
    # an in-process engine keeps its verdicts: a violation it let through is "ignored"
    assert _classify([sample(["maxLength"])], "maxLength", "llguidance")[0] == "ignored"


@pytest.mark.long
@pytest.mark.slow
def test_probe_llama_cpp_python_server_keyword_by_keyword(llama_server, tmp_path, capsys):
    data = _probe(llama_server, tmp_path / "probe")
    (probed,) = data["engines"]
    assert (probed["engine"], probed["canary"]) == ("server", "passed")
    status = {k["keyword"]: k["status"] for k in probed["keywords"]}
    assert list(status) == KEYWORDS
    # llama-cpp-python's JSON-Schema-to-GBNF converter has no numeric bounds:
    # the nudged 3 goes through; string lengths and enums are in its grammar
    assert status == {"minimum": "not enforced", "maxLength": "enforced", "enum": "enforced"}
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
    assert "| minimum | not enforced (2/2 broke) |" in md and "`Server` header uvicorn" in md
    assert "wrote" in capsys.readouterr().err


@pytest.mark.slow
def test_probe_llama_server_keyword_by_keyword(llama_cpp_server, tmp_path):
    data = _probe(llama_cpp_server, tmp_path / "probe")
    (probed,) = data["engines"]
    assert (probed["engine"], probed["canary"]) == ("server", "passed")
    assert [k["keyword"] for k in probed["keywords"]] == KEYWORDS
    assert {k["status"] for k in probed["keywords"]} <= {"enforced", "not enforced", "inconclusive"}
    assert data["server"]["dialect"] in ("json_schema", "json_object_schema")
    assert data["server"]["server_header"]
