"""Reading answers out of free model text and JSON output.

Everything here takes untrusted model output: nothing raises on any text,
nothing is evaluated, and work is bounded by input caps.

- ``extract_number``: the number right after the last ``Answer:`` that has
  one, then ``\\boxed{}``, then the last number (commas, ``$``, negatives,
  decimals).
- ``answer_line``: the text after the last ``Answer:``.
- ``find_python_call``: one ``func(a=1, b="x")`` call, read with ``ast`` as
  literals only (a bare name, ``data=my_data``, reads as the string
  ``"my_data"``, as the official BFCL decoder reads it).
- ``parse_json_output``: strict JSON (a fenced block accepted), through the
  shared ``json`` output format.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from itertools import islice
from typing import Literal

from conformbench.formats.base import ParsedOutput, output_formats
from conformbench.formats.fences import extract_sample
from conformbench.jsontypes import JSONValue, Schema
from conformbench.tasks.bfcl.functions import FunctionCall

__all__ = [
    "MAX_TEXT_CHARS",
    "CallReading",
    "NumberAnswer",
    "answer_line",
    "extract_number",
    "find_python_call",
    "normalize_text",
    "parse_json_output",
    "parse_python_call",
]

#: longer model output is cut to this before any search (bounds the work)
MAX_TEXT_CHARS = 100_000
_MAX_DIGITS = 40
_MAX_DEPTH = 64

# Thousands separators in threes; the first group may be longer, as models
# write it ('1080,000' is 1080000, not 1080 and 0).
_NUMBER = re.compile(r"(?<![\w.])([-\u2212]?)\$?(\d++(?:,\d{3})++|\d++)(\.\d+)?(?!\d)")
# Possessive quantifiers and start-of-token lookbehinds keep every search
# linear on hostile text (no backtracking over long runs).
_ANSWER = re.compile(r"(?i)\banswer[^\w\n:\uff1a]*+[:\uff1a]([^\n]*)")
#: markup an answer may open with: bold/italic marks, LaTeX \\( or \\[, spaces
_LEAD = re.compile(r"(?:[\s*_]|\\[(\[])*+")
_BOXED = re.compile(r"\\boxed\s*+\{((?:[^{}]|\{[^{}]*+\})*+)\}")


@dataclass(frozen=True)
class NumberAnswer:
    value: Decimal
    source: Literal["answer_line", "boxed", "last_number"]

    def as_json(self) -> JSONValue:
        """An int when integral, else a float (JSON-friendly)."""
        if self.value == self.value.to_integral_value():
            return int(self.value)
        return float(self.value)


def _numbers(text: str) -> list[Decimal]:
    out: list[Decimal] = []
    for match in _NUMBER.finditer(text):
        sign, whole, frac = match.groups()
        digits = whole.replace(",", "")
        if len(digits) + len(frac or "") > _MAX_DIGITS:
            continue
        try:
            value = Decimal(digits + (frac or ""))
        except InvalidOperation:  # pragma: no cover - the regex admits digits only
            continue
        out.append(-value if sign else value)
    return out


def _first_number(fragment: str) -> Decimal | None:
    # '2 * 9 = 18' means 18: read after the last '='.
    tail = fragment.rsplit("=", 1)[-1]
    found = _numbers(tail) or _numbers(fragment)
    return found[0] if found else None


def _leading_number(fragment: str) -> Decimal | None:
    """The number the text of an ``Answer:`` line starts with (after markup
    such as ``**``, ``\\(`` or ``$``), None when it starts with words.

    'Answer: After 15 days, Ryan has 25 flowers.' names no number first: a
    number picked out of such a sentence is a guess, so the line is skipped.
    An equation ('Answer: 2 * 9 = 18') means its result."""
    lead = _LEAD.match(fragment)
    begin = lead.end() if lead else 0
    if _NUMBER.match(fragment, begin) is None:
        return None
    return _first_number(fragment[begin:])


def extract_number(text: str) -> NumberAnswer | None:
    """The numeric answer of free text, or None when it has no number."""
    text = text[:MAX_TEXT_CHARS]
    for fragment in reversed(_ANSWER.findall(text)):
        value = _leading_number(fragment)
        if value is not None:
            return NumberAnswer(value, "answer_line")
    for inner in reversed(_BOXED.findall(text)):
        value = _first_number(inner)
        if value is not None:
            return NumberAnswer(value, "boxed")
    found = _numbers(text)
    return NumberAnswer(found[-1], "last_number") if found else None


def answer_line(text: str) -> str | None:
    """The text after the last ``Answer:`` (None when there is none)."""
    found = _ANSWER.findall(text[:MAX_TEXT_CHARS])
    return found[-1].strip().strip("*_ ").strip() if found else None


def normalize_text(text: str) -> str:
    """Case-folded with runs of whitespace made one space (exact-match key)."""
    return " ".join(text.split()).casefold()


# ---------------------------------------------------------------- Python calls


@dataclass(frozen=True)
class CallReading:
    """What ``find_python_call`` read: a call, or why there is none."""

    call: FunctionCall | None
    error: str | None = None


class _NotLiteral(ValueError):
    pass


class _NotPython(ValueError):
    """The text is not a Python expression at all (so prose may hold a call)."""


_CALL_START = re.compile(r"(?<![\w.])[A-Za-z_]\w*+(?:\s*+\.\s*+[A-Za-z_]\w*+)*+\s*+\(")
_MAX_STARTS = 50
_PYTHON_FENCES = ("python", "py", "python3")
#: a call is searched for at most this far after its opening bracket
_MAX_CALL_CHARS = 10_000


def parse_python_call(source: str) -> FunctionCall:
    """Read ``source`` as one call (or a one-element list of calls) with
    keyword arguments whose values are literals or bare names (read as
    strings). ValueError says why not."""
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise _NotPython(f"not Python: {type(exc).__name__}") from None
    node = tree.body
    if isinstance(node, (ast.List, ast.Tuple)):
        if len(node.elts) != 1:
            raise ValueError(f"{len(node.elts)} calls where one was asked for")
        node = node.elts[0]
    if not isinstance(node, ast.Call):
        raise ValueError("not a function call")  # noqa: TRY004 - one error type for "unreadable"
    name = _dotted_name(node.func)
    if node.args:
        raise ValueError("positional arguments (only keyword arguments are read)")
    arguments: dict[str, JSONValue] = {}
    for keyword in node.keywords:
        if keyword.arg is None:
            raise ValueError("**kwargs unpacking")
        arguments[keyword.arg] = _literal(keyword.value, 0)
    return FunctionCall(name, arguments)


def _dotted_name(node: ast.expr) -> str:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        raise ValueError("the called object is not a (dotted) name")  # noqa: TRY004 - as above
    parts.append(node.id)
    return ".".join(reversed(parts))


def _literal(node: ast.expr, depth: int) -> JSONValue:
    if depth > _MAX_DEPTH:
        raise _NotLiteral("value nested too deeply")
    if isinstance(node, ast.Constant):
        return _constant(node.value)
    if isinstance(node, ast.Name):
        # The official BFCL decoder reads a variable as its name, and the
        # possible answers list such names as strings ('data=my_data').
        return node.id
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = node.operand
        if isinstance(inner, ast.Constant) and (type(inner.value) is int or type(inner.value) is float):
            number = _number(inner.value)
            return -number if isinstance(node.op, ast.USub) else number
        raise _NotLiteral("a sign on a non-number")
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_literal(e, depth + 1) for e in node.elts]
    if isinstance(node, ast.Dict):
        out: dict[str, JSONValue] = {}
        for key, value in zip(node.keys, node.values):
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                raise _NotLiteral("a dict key that is not a string")
            out[key.value] = _literal(value, depth + 1)
        return out
    raise _NotLiteral(f"not a literal: {type(node).__name__}")


def _constant(value: object) -> JSONValue:
    if value is None or type(value) is str or type(value) is bool:
        return value
    if type(value) is int or type(value) is float:
        return _number(value)
    raise _NotLiteral(f"unsupported constant of type {type(value).__name__}")


def _number(value: int | float) -> int | float:
    if isinstance(value, float) and not math.isfinite(value):
        raise _NotLiteral("unsupported constant of type float")
    return value


def _balanced_end(text: str, open_at: int) -> int | None:
    """Index just past the bracket closing the one at ``open_at`` (quotes respected)."""
    depth, quote, i = 0, "", open_at
    stop = min(len(text), open_at + _MAX_CALL_CHARS)
    while i < stop:
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return None


def find_python_call(text: str, prefer: str | None = None) -> CallReading:
    """The function call written in free text.

    The whole reply (or its fenced block) is read first: if it is a Python
    expression, it is the answer (a call, or why it is not one: two calls,
    positional arguments...). Only when it is not Python at all are calls
    embedded in prose tried, in order: the first one named ``prefer`` (else
    the first one that reads) is returned.
    """
    text = text[:MAX_TEXT_CHARS]
    errors: list[str] = []
    sample = extract_sample(text, _PYTHON_FENCES)
    for candidate in dict.fromkeys([sample.text, text]):
        try:
            return CallReading(parse_python_call(candidate))
        except _NotPython as exc:
            errors.append(str(exc))
        except ValueError as exc:
            return CallReading(None, f"no readable call ({exc})")
    found: list[FunctionCall] = []
    for match in islice(_CALL_START.finditer(text), _MAX_STARTS):
        end = _balanced_end(text, match.end() - 1)
        if end is None:
            continue
        try:
            found.append(parse_python_call(text[match.start():end]))
        except ValueError as exc:
            errors.append(str(exc))
    for call in found:
        if call.name == prefer:
            return CallReading(call)
    if found:
        return CallReading(found[0])
    # the most telling reason: one about a call that was written, if any
    telling = [e for e in errors if not e.startswith(("not Python", "not a function call"))]
    return CallReading(None, f"no function call found ({(telling or errors)[0]})")


# ---------------------------------------------------------------- JSON output


def parse_json_output(text: str, schema: Schema | None = None) -> ParsedOutput:
    """Strictly parse model output as one JSON document (a fenced block is
    accepted), with the shared ``json`` output format's rules and limits."""
    return output_formats.get("json")().parse(text, schema)
