"""Reading a 2xx answer of an OpenAI-compatible server into a
GenerationResult. The answer is untrusted: whatever it holds ends as a
result, and what is odd about it is said in the result, never hidden as a
normal ``stop``.

- ``content: null`` (no text at all) is an error with the server's finish
  reason in it: there is no answer to score.
- A finish reason other than ``stop`` or ``length`` (``content_filter``,
  ``tool_calls``, anything else) is an error naming it: the text is kept, but
  it is not an answer the model ended by itself. A missing one reads as
  ``stop`` (servers that predate the field).
- A token count that is not a count (``1e400``, negative, a string) is
  recorded as 0 with a note; the answer stays good.
- Text longer than the parse limit (formats/limits.py) is stored cut to one
  character over it, so it still reads as over the limit, with a note; under
  a thinking constraint only the answer after the stop string is cut.
- Lone surrogates (escaped in the JSON) become U+FFFD, with a note.

A request that offered tools (a tools arm) is read by ``tool_answer``: its
calls (``message.tool_calls``, each recorded as the server gave it), the
content beside them (null is no error there: a call needs no text) and the
server's finish reason (``tool_calls`` ends a call as ``stop`` ends text);
its ``text`` is the calls' scored form (``records.tool_calls.calls_text``).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Literal

from conformbench.backends.openai.http import Answer
from conformbench.formats.limits import DEFAULT_LIMITS
from conformbench.records.generation import GenerationResult
from conformbench.records.tool_calls import RawToolCall, ToolRequest, calls_text
from conformbench.records.urls import scrub_url_secrets

__all__ = ["STORED_CHARS", "parse_completion"]

_SURROGATE = re.compile("[\ud800-\udfff]")
#: characters of an answer's text that are stored: one over the parse limit,
#: so a cut text is refused for its size exactly as the whole one would be
STORED_CHARS = DEFAULT_LIMITS.max_chars + 1
_FINISHES: dict[Any, Literal["stop", "length"]] = {"stop": "stop", None: "stop", "length": "length"}


def _count(usage: dict[str, Any], key: str, notes: list[str]) -> int:
    value = usage.get(key)
    if value is None:
        return 0
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**63:
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer() and 0 <= value < 2**63:
        return int(value)
    notes.append(f"usage.{key} is not a token count ({str(value)[:40]}); recorded as 0")
    return 0


def _text(choice: dict[str, Any], endpoint: str) -> str | None:
    text = choice["message"]["content"] if endpoint == "chat" else choice["text"]
    if not isinstance(text, str | None):
        raise TypeError(f"the text is a {type(text).__name__}, not a string")
    return text


def _cut(text: str, notes: list[str], stop: str | None) -> str:
    """``text`` cut one character past the parse limit; under a thinking
    constraint only the answer after the first ``stop`` is cut (the
    thinking before it is kept whole, within the body's byte cap, so the
    runner still finds the answer and the record counts the thinking right:
    the replay stores it cut, with its length and digest)."""
    at = -1 if stop is None else text.find(stop)
    if stop is not None and at < 0:
        return text  # no answer yet: all of it is thinking
    start = 0 if stop is None else at + len(stop)
    if len(text) - start > STORED_CHARS:
        what = "text" if stop is None else "answer after the thinking"
        notes.append(f"the server's {what} is {len(text) - start} characters, over the parse limit of "
                     f"{DEFAULT_LIMITS.max_chars}: only its first {STORED_CHARS} are kept")
        text = text[:start + STORED_CHARS]
    return text


def _clean(text: str, notes: list[str], stop: str | None = None) -> str:
    text = _cut(text, notes, stop)
    text, replaced = _SURROGATE.subn("\ufffd", text)
    if replaced:
        notes.append(f"the server's text held {replaced} character(s) that are not valid Unicode "
                     f"(lone surrogates), replaced with U+FFFD")
    return text


def _result(data: Any, endpoint: str, stop: str | None) -> GenerationResult:
    choice = data["choices"][0]
    text = _text(choice, endpoint)
    reason = choice.get("finish_reason")
    notes: list[str] = []
    usage = data.get("usage") or {}
    if not isinstance(usage, dict):
        usage = {}
    prompt_tokens = _count(usage, "prompt_tokens", notes)
    completion_tokens = _count(usage, "completion_tokens", notes)
    shown = json.dumps(reason)[:60]
    if text is None:
        error = f"the server answered no text (content null, finish_reason {shown})"
        return GenerationResult("", "error", prompt_tokens, completion_tokens, error="; ".join([error, *notes]))
    text = _clean(text, notes, stop)
    finish = _FINISHES.get(reason) if isinstance(reason, str | None) else None
    if finish is None:
        notes.insert(0, f"the server ended the answer with finish_reason {shown}, not stop or length")
    return GenerationResult(text, finish or "error", prompt_tokens, completion_tokens,
                            error="; ".join(notes) or None)


#: characters of the content beside tool calls that are stored
_CONTENT_CHARS = 100_000
_TOOL_FINISHES: dict[Any, Literal["stop", "length"]] = {"tool_calls": "stop", "function_call": "stop", **_FINISHES}


def _tool_call(raw: Any, notes: list[str]) -> RawToolCall:
    function = raw.get("function") if isinstance(raw, dict) else None
    if not isinstance(function, dict):
        notes.append(f"a tool call without a function object ({json.dumps(raw)[:80]}); recorded empty")
        return RawToolCall(name="", arguments="")
    name, arguments = function.get("name"), function.get("arguments")
    if not isinstance(name, str):
        notes.append(f"a tool call whose name is not a string ({json.dumps(name)[:40]})")
        name = json.dumps(name)
    if not isinstance(arguments, str):
        notes.append("a tool call whose arguments are not a string: recorded as their JSON text")
        arguments = json.dumps(arguments, ensure_ascii=False)
    call_id = raw.get("id")
    return RawToolCall(name=_clean(name, notes)[:1000], arguments=_clean(arguments, notes),
                       id=call_id[:200] if isinstance(call_id, str) else None)


def tool_answer(data: Any, tools: ToolRequest) -> GenerationResult:
    """The result of a chat answer to a request that offered ``tools``."""
    message = data["choices"][0]["message"]
    reason = data["choices"][0].get("finish_reason")
    notes: list[str] = []
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    prompt_tokens, completion_tokens = _count(usage, "prompt_tokens", notes), _count(usage, "completion_tokens", notes)
    raw_calls = message.get("tool_calls") or []
    if not isinstance(raw_calls, list):
        notes.append(f"tool_calls is not a list ({json.dumps(raw_calls)[:60]}); read as no call")
        raw_calls = []
    calls = tuple(_tool_call(raw, notes) for raw in raw_calls[:64])
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise TypeError(f"the content is a {type(content).__name__}, not a string")
    if content is not None and len(content) > _CONTENT_CHARS:
        notes.append(f"the content beside the calls is {len(content)} characters: its first {_CONTENT_CHARS} are kept")
        content = content[:_CONTENT_CHARS]
    finish = _TOOL_FINISHES.get(reason) if isinstance(reason, str | None) else None
    if finish is None:
        notes.insert(0, f"the server ended the answer with finish_reason {json.dumps(reason)[:60]}, "
                        "not tool_calls, stop or length")
    return GenerationResult(calls_text(calls, tools), finish or "error", prompt_tokens, completion_tokens,
                            error="; ".join(notes) or None, tool_calls=calls,
                            content=None if content is None else _clean(content, notes),
                            server_finish=reason if isinstance(reason, str) else None)


def parse_completion(answer: Answer, endpoint: str, stop: str | None = None,
                     tools: ToolRequest | None = None) -> GenerationResult:
    """A GenerationResult from a 2xx answer; ValueError if it is malformed.
    ``stop``: the thinking constraint's stop string, if the request had one;
    ``tools``: the functions it offered (a tools arm's answer is its calls)."""
    try:
        data = json.loads(answer.body)
        return _result(data, endpoint, stop) if tools is None else tool_answer(data, tools)
    except (ValueError, KeyError, IndexError, TypeError, AttributeError, OverflowError,
            RecursionError) as exc:
        raise ValueError(scrub_url_secrets(f"malformed response from the server ({type(exc).__name__}: {exc}): "
                                           f"{answer.text[:300]}", answer.url)) from None
