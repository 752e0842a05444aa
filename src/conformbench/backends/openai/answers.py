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
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Literal

from conformbench.backends.openai.http import Answer
from conformbench.formats.limits import DEFAULT_LIMITS
from conformbench.records.generation import GenerationResult
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


def parse_completion(answer: Answer, endpoint: str, stop: str | None = None) -> GenerationResult:
    """A GenerationResult from a 2xx answer; ValueError if it is malformed.
    ``stop``: the thinking constraint's stop string, if the request had one."""
    try:
        return _result(json.loads(answer.body), endpoint, stop)
    except (ValueError, KeyError, IndexError, TypeError, AttributeError, OverflowError,
            RecursionError) as exc:
        raise ValueError(scrub_url_secrets(f"malformed response from the server ({type(exc).__name__}: {exc}): "
                                           f"{answer.text[:300]}", answer.url)) from None
