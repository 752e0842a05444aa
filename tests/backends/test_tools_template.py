"""The shipped tools-aware template for the embedded model
(``data/templates/smollm2-tools.jinja``), rendered by llama-cpp-python's
``Jinja2ChatFormatter`` as a server would: without tools it is the model's
own template's text, with tools it shows the functions (hermes-style), and
an assistant turn's calls are written back as ``<tool_call>`` blocks."""

from __future__ import annotations

import json

import llama_cpp
from llama_cpp.llama_chat_format import Jinja2ChatFormatter

from conformbench.backends.locate import embedded_model_path, tools_template_path

TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "The weather.", "parameters": {
    "type": "object", "properties": {"unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}}}}]


def _formatter(template: str) -> Jinja2ChatFormatter:
    return Jinja2ChatFormatter(template=template, eos_token="<|im_end|>", bos_token="<|im_start|>",
                               add_generation_prompt=True)


def _own_template() -> str:
    llm = llama_cpp.Llama(model_path=str(embedded_model_path()), vocab_only=True, verbose=False)
    try:
        return str(llm.metadata["tokenizer.chat_template"])
    finally:
        llm.close()


def test_without_tools_it_renders_what_the_models_own_template_does() -> None:
    ours = _formatter(tools_template_path().read_text(encoding="utf-8"))
    own = _formatter(_own_template())
    for messages in ([{"role": "user", "content": "Hi"}],
                     [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},
                      {"role": "assistant", "content": "Hello."}, {"role": "user", "content": "Bye"}]):
        assert ours(messages=messages).prompt == own(messages=messages).prompt
    assert own(messages=[{"role": "user", "content": "Hi"}], tools=TOOLS).prompt == \
        own(messages=[{"role": "user", "content": "Hi"}]).prompt  # the model's own template drops the tools


def test_with_tools_it_shows_the_functions_and_writes_calls_back() -> None:
    ours = _formatter(tools_template_path().read_text(encoding="utf-8"))
    shown = ours(messages=[{"role": "user", "content": "Weather?"}], tools=TOOLS).prompt
    assert "<tools>" in shown and json.dumps(TOOLS[0]["function"]) in shown and "<tool_call>" in shown
    assert shown.endswith("<|im_start|>assistant\n")
    call = {"role": "assistant", "content": "", "tool_calls": [
        {"type": "function", "function": {"name": "get_weather", "arguments": '{"unit": "celsius"}'}}]}
    turn = ours(messages=[{"role": "user", "content": "Weather?"}, call,
                          {"role": "tool", "content": "sunny"}], tools=TOOLS).prompt
    assert '<tool_call>\n{"name": "get_weather", "arguments": {"unit": "celsius"}}\n</tool_call>' in turn
    assert "<tool_response>\nsunny\n</tool_response>" in turn
