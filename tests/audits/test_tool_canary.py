"""The tools canary's verdict from a reply (a stand-in server answering as
llama-server and vLLM were measured to: the real servers are run in
tests/backends/test_tools_servers.py and test_tools_vllm.py)."""

from __future__ import annotations

from conformbench.audits.tool_canary import tool_canary, tools_reach
from conformbench.records.generation import DecodingSettings, GenerationRequest, GenerationResult
from conformbench.records.prompt import Message, Prompt
from conformbench.records.tool_calls import RawToolCall, ToolFunction, ToolMode, ToolRequest


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


_REFUSAL = ('HTTP 400: {"error": {"message": "\\"auto\\" tool choice requires --enable-auto-tool-choice and '
            '--tool-call-parser to be set", "type": "BadRequestError"}}')


class _NoParser:
    """Answers as vLLM 0.32 without ``--tool-call-parser`` and with a
    template that renders no tools: HTTP 400 to any tool_choice but "none",
    and the same prompt tokens with the tools as without them."""

    def __init__(self, tokens_with_tools: int = 40) -> None:
        self.tokens_with_tools = tokens_with_tools
        self.choices: list[str | None] = []

    def generate(self, request: GenerationRequest) -> GenerationResult:
        choice = None if request.tools is None else request.tools.mode.choice
        self.choices.append(choice)
        if choice not in (None, "none"):
            return GenerationResult("", "error", error=_REFUSAL)
        return GenerationResult("x", "length", prompt_tokens=40 if choice is None else self.tokens_with_tools)

    def generate_many(self, requests: list[GenerationRequest]) -> list[GenerationResult]:
        return [self.generate(r) for r in requests]


def _offer() -> GenerationRequest:
    function = ToolFunction("get_weather", "Weather.", {"type": "object", "properties": {}}, "get_weather")
    return GenerationRequest(Prompt((Message("user", "Weather in Paris?"),)), DecodingSettings(max_tokens=8),
                             tools=ToolRequest((function,), ToolMode("auto")))


def test_a_server_refusing_the_tool_choice_is_counted_under_none_and_named_as_dropping() -> None:
    """vLLM without a tool parser refuses auto (HTTP 400) before rendering
    anything; under "none" it renders the template, so dropping is named."""
    server = _NoParser()
    reach = tools_reach(server, _offer())  # type: ignore[arg-type]
    assert server.choices == ["auto", None, "none"]
    assert reach.dropped and reach.error is None and reach.choice == "none", reach
    line = reach.line("model 'smol'")
    assert "drops the tools" in line and "counted under tool_choice none" in line and "--tool-call-parser" in line
    assert "--allow-dropped-tools" in line and "\n" not in line
    shown = tools_reach(_NoParser(tokens_with_tools=95), _offer())  # type: ignore[arg-type]
    assert not shown.dropped and shown.with_tools == 95 and "reach the model" in shown.line("m")
