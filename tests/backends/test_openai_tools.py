"""The openai backend's tools requests (no server: the body built, and a
server's answers read) and the tools checks against conformbench.testing's
scripted server are in tests/backends/test_tools_servers.py with the real
servers."""

from __future__ import annotations

import json

import pytest

from conformbench.backends.base import backends
from conformbench.backends.openai.answers import parse_completion
from conformbench.backends.openai.http import Answer
from conformbench.errors import UsageError
from conformbench.records.generation import BackendConfig, DecodingSettings, GenerationRequest
from conformbench.records.prompt import Message, Prompt
from conformbench.records.tool_calls import ToolFunction, ToolMode, ToolRequest

WEATHER = ToolFunction("get_weather", "The weather in a city.", {
    "type": "object", "properties": {"city": {"type": "string"}, "unit": {"enum": ["celsius", "fahrenheit"]}},
    "required": ["city", "unit"]}, "get_weather")


def _request(mode: ToolMode) -> GenerationRequest:
    return GenerationRequest(Prompt((Message("user", "Weather in Paris?"),)), DecodingSettings(max_tokens=32),
                             tools=ToolRequest((WEATHER,), mode))


def _backend(**extra: object):
    return backends.get("openai")(BackendConfig(base_url="http://127.0.0.1:9/v1", extra=dict(extra)))


@pytest.mark.parametrize(("mode", "choice"), [
    (ToolMode("auto"), "auto"), (ToolMode("required", strict=True), "required"),
    (ToolMode("named"), {"type": "function", "function": {"name": "get_weather"}}),
])
def test_the_body_carries_the_tools_the_choice_and_strict(mode, choice):
    body = _backend().request_body(_request(mode))
    assert body["tool_choice"] == choice
    (tool,) = body["tools"]
    assert tool["type"] == "function" and tool["function"]["parameters"] == WEATHER.parameters
    assert tool["function"].get("strict", False) is mode.strict
    assert body["messages"] == [{"role": "user", "content": "Weather in Paris?"}]


def test_tools_need_the_chat_endpoint():
    with pytest.raises(UsageError, match="chat endpoint"):
        _backend(endpoint="completions").request_body(_request(ToolMode("auto")))


def _answer(message: dict, finish: str | None, usage: dict | None = None) -> Answer:
    data = {"choices": [{"message": message, "finish_reason": finish}], "usage": usage or {"prompt_tokens": 40}}
    return Answer(200, json.dumps(data).encode(), None)


def test_a_call_is_read_with_its_raw_arguments_and_finish():
    tools = ToolRequest((WEATHER,), ToolMode("required"))
    call = {"id": "c0", "type": "function", "function": {"name": "get_weather", "arguments": '"celsius"'}}
    result = parse_completion(_answer({"content": None, "tool_calls": [call]}, "tool_calls"), "chat", tools=tools)
    assert result.finish_reason == "stop" and result.server_finish == "tool_calls" and result.error is None
    assert result.text == '[{"name": "get_weather", "arguments": "celsius"}]'
    assert result.tool_calls is not None and result.tool_calls[0].arguments == '"celsius"'
    assert result.content is None and result.prompt_tokens == 40


def test_prose_under_tools_is_no_call_and_odd_calls_are_said():
    tools = ToolRequest((WEATHER,), ToolMode("auto"))
    prose = parse_completion(_answer({"content": "It is sunny."}, "stop"), "chat", tools=tools)
    assert (prose.text, prose.content, prose.finish_reason) == ("[]", "It is sunny.", "stop")
    odd = parse_completion(_answer({"content": None, "tool_calls": [
        {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}, "junk"]}, "weird"), "chat", tools=tools)
    assert odd.finish_reason == "error" and "weird" in (odd.error or "")
    assert "not a string" in (odd.error or "") and "without a function object" in (odd.error or "")
    assert json.loads(odd.text)[0] == {"name": "get_weather", "arguments": {"city": "Paris"}}


def test_without_tools_a_tool_call_finish_is_still_an_error():
    result = parse_completion(_answer({"content": "x"}, "tool_calls"), "chat")
    assert result.finish_reason == "error" and "tool_calls" in (result.error or "")
