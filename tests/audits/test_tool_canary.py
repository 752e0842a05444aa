"""The tools canary's verdict from a reply (a stand-in server answering as
llama-server and vLLM were measured to: the real servers are run in
tests/backends/test_tools_servers.py and test_tools_vllm.py)."""

from __future__ import annotations

from conformbench.audits.tool_canary import tool_canary
from conformbench.records.generation import GenerationRequest, GenerationResult
from conformbench.records.tool_calls import RawToolCall, ToolMode


class _Replies:
    """Answers every request with one result."""

    def __init__(self, result: GenerationResult) -> None:
        self.result = result

    def generate(self, request: GenerationRequest) -> GenerationResult:
        assert request.tools is not None
        return self.result


def _canary(mode: str, result: GenerationResult):
    return tool_canary(_Replies(result), ToolMode(mode), seed=0)  # type: ignore[arg-type]


def test_a_forcing_mode_cut_at_the_cap_before_a_call_is_cut_not_unforced() -> None:
    """vLLM under ``required`` was writing ``<tool_call>`` when the 64-token
    cap cut it; llama-server's grammar lets text come before the call."""
    cut = _canary("required", GenerationResult("[]", "length", content='<tool_call>\n{"name": "cb_record_code", "ar',
                                               server_finish="length"))
    assert cut.forced == "cut" and cut.held is None
    assert "cut at the token cap before a call came back" in cut.line()
    stopped = _canary("named", GenerationResult("[]", "stop", content="The weather today.", server_finish="stop"))
    assert stopped.forced == "not forced" and "call not forced" in stopped.line()


def test_a_call_is_forced_and_auto_is_not_asked() -> None:
    call = RawToolCall(name="cb_record_code", arguments='{"code": "x"}')
    called = _canary("required", GenerationResult('[{"name": "cb_record_code"}]', "stop", tool_calls=(call,)))
    assert called.forced == "forced" and called.held is False
    assert _canary("auto", GenerationResult("[]", "length")).forced == "not asked"
