"""Resource limits shared by the output parsers.

Model answers are untrusted: every parser checks size before parsing and
depth while (or before) parsing, so hostile input ends as a one-line error
instead of a RecursionError, a memory blow-up or a hang.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from conformbench.records.stored_text import answer_chars

__all__ = ["DEFAULT_LIMITS", "Limits", "oversize", "precheck_text", "unencodable_text"]


@dataclass(frozen=True)
class Limits:
    """Bounds applied to every answer text before and while it is parsed."""

    #: characters (not bytes) of the whole answer text
    max_chars: int = 1_000_000
    #: nesting of arrays/objects (JSON, YAML) or elements (XML); the root is depth 1
    max_depth: int = 200


DEFAULT_LIMITS = Limits()


def oversize(text: str, limits: Limits = DEFAULT_LIMITS) -> str | None:
    """Why ``text`` is too long to be read at all, or None. A ``CutText``
    (an answer a replay stored cut) counts as the whole answer it stands for,
    so it gets the reason the whole answer got."""
    chars = answer_chars(text)
    if chars > limits.max_chars:
        return f"answer is {chars} characters, over the limit of {limits.max_chars}"
    return None


def precheck_text(text: object, limits: Limits) -> str | None:
    """Why ``text`` must not be parsed at all, or None when it may be.

    Runs before any parser so that oversized or binary-looking input costs
    nothing: the size test comes first and reads only ``len``.
    """
    if not isinstance(text, str):
        return f"answer is {type(text).__name__}, not text"
    too_long = oversize(text, limits)
    if too_long:
        return too_long
    if "\x00" in text:
        return "answer contains a NUL character"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # lone surrogates: what undecodable bytes become under surrogateescape
        return "answer is not valid UTF-8 text (lone surrogate)"
    if not text.strip():
        return "answer is empty"
    return None


def unencodable_text(value: Any) -> str | None:
    """Why a parsed value has no UTF-8 form (a lone surrogate written as an
    escape, e.g. JSON's ``"\\ud800"``), or None when it has one."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return "a string holds a lone surrogate (not valid Unicode text)"
    except (TypeError, ValueError, RecursionError):
        return "the value is outside the JSON data model"
    return None
