"""What a string value may be: JSON Schema ``pattern``, ``format`` and
lengths as regular expressions over the value's characters, and the Lark
syntax that intersects them.

A format regex accepts a subset of what the validator's format checker
accepts (``date`` knows month lengths and leap years; ``email`` is a plain
``local@domain``), so text the grammar lets through never fails ``format``.
A ``pattern`` is translated only when its anchors sit at its two ends and it
uses nothing the Rust regex engine lacks (look-around, back-references);
the caller lists the others as unenforced.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from conformbench.validator.pattern_size import PatternTooLarge, check_size

__all__ = [
    "ANY_TEXT",
    "FORMATS",
    "intersect",
    "length_regex",
    "lit",
    "literal_regex",
    "pattern_regex",
    "regex_ok",
    "rx",
]

#: any characters, line breaks included
ANY_TEXT = r"(?s:.*)"

_YEAR = r"(?:[0-9]{3}[1-9]|[0-9]{2}[1-9][0-9]|[0-9][1-9][0-9]{2}|[1-9][0-9]{3})"
_LEAP = r"(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)"
_DATE = (
    rf"(?:{_YEAR}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])"
    r"|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-8]))"
    rf"|{_LEAP}-02-29)"
)
_TIME = (
    r"(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]+)?"
    r"(?:[zZ]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])"
)
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
_IDN_CHAR = r"[^\x00-\x20\x7f\x{85}\x{a0}\x{2028}\x{2029}\"(),:;<>@\[\\\].]"
_URI_CHAR = r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/]|%[0-9A-Fa-f]{2})"

#: format name -> regex of values the format checker accepts (a subset)
FORMATS: dict[str, str] = {
    "date": _DATE,
    "date-time": rf"{_DATE}[tT]{_TIME}",
    "time": _TIME,
    "email": rf"[A-Za-z0-9!#$%&'*+/=?^_`{{|}}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{{|}}~-]+)*@{_LABEL}(?:\.{_LABEL})*",
    "idn-email": rf"{_IDN_CHAR}+(?:\.{_IDN_CHAR}+)*@{_IDN_CHAR}+(?:\.{_IDN_CHAR}+)*",
    "uuid": r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
    "ipv4": rf"{_OCTET}(?:\.{_OCTET}){{3}}",
    "uri": (
        rf"[A-Za-z][A-Za-z0-9+.\-]*:{_URI_CHAR}*"
        rf"(?:\?(?:{_URI_CHAR}|\?)*)?(?:#(?:{_URI_CHAR}|\?)*)?"
    ),
}

_FORBIDDEN_OPS = frozenset({"GROUPREF", "GROUPREF_EXISTS", "ASSERT", "ASSERT_NOT", "ATOMIC_GROUP",
                            "POSSESSIVE_REPEAT"})


def _opcodes(node: Any, out: list[tuple[str, Any]]) -> None:
    """Collect every (opcode name, argument) of a parsed regex, nested ones
    included (``re._parser`` trees: SubPatterns, lists and op tuples)."""
    if hasattr(node, "data"):
        node = node.data
    if isinstance(node, tuple) and len(node) == 2 and hasattr(node[0], "name"):
        out.append((node[0].name, node[1]))
        node = node[1]
    if isinstance(node, (list, tuple)) or hasattr(node, "data"):
        for part in node.data if hasattr(node, "data") else node:
            _opcodes(part, out)


def _escaped(text: str, index: int) -> bool:
    """Whether the character at ``index`` follows an odd run of backslashes."""
    run = 0
    while index - run - 1 >= 0 and text[index - run - 1] == "\\":
        run += 1
    return run % 2 == 1


def pattern_regex(pattern: str) -> str | None:
    """The regex of whole values that ``pattern`` (search semantics) matches,
    for llguidance, or None when it cannot be translated faithfully."""
    from re import _parser

    from llguidance import regex_to_lark

    try:
        check_size(pattern)
        parsed = _parser.parse(pattern)
    except (re.error, RecursionError, OverflowError, PatternTooLarge):
        return None
    ops: list[tuple[str, Any]] = []
    _opcodes(parsed, ops)
    if any(name in _FORBIDDEN_OPS for name, _ in ops):
        return None
    anchors = [str(av) for name, av in ops if name == "AT"]
    body, head, tail = pattern, ANY_TEXT, ANY_TEXT
    if anchors and str(parsed.data[0][1]) == "AT_BEGINNING" and pattern.startswith("^"):
        body, head = body[1:], ""
        anchors.remove("AT_BEGINNING")
    if anchors and str(parsed.data[-1][1]) == "AT_END" and body.endswith("$") and not _escaped(body, len(body) - 1):
        body, tail = body[:-1], ""
        anchors.remove("AT_END")
    if anchors:
        return None
    try:
        translated = regex_to_lark(body, "dw")
    except ValueError:
        return None
    return f"{head}(?:{translated}){tail}"


def length_regex(shortest: int, longest: int | None) -> str | None:
    """Values of ``shortest`` to ``longest`` characters; None when free."""
    if shortest == 0 and longest is None:
        return None
    top = "" if longest is None else str(longest)
    return rf"(?s:.){{{shortest},{top}}}"


_SLASH = re.compile(r"\\.|/", re.DOTALL)


@lru_cache(maxsize=4096)
def rx(regex: str) -> str:
    """A regex as a Lark terminal operand (unescaped slashes escaped)."""
    return "/" + _SLASH.sub(lambda m: "\\/" if m.group() == "/" else m.group(), regex) + "/"


@lru_cache(maxsize=4096)
def regex_ok(regex: str) -> bool:
    """Whether llguidance compiles this regex as a terminal."""
    from llguidance import LLMatcher

    return LLMatcher.validate_grammar(LLMatcher.grammar_from_lark(f"start: T\nT: {rx(regex)}\n")) == ""


def lit(text: str) -> str:
    """A string as a Lark literal."""
    out = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return '"' + out.replace("\r", "\\r") + '"'


def intersect(base: str, musts: Sequence[str] = (), nots: Sequence[str] = ()) -> str:
    """Lark terminal text of ``base`` (a terminal operand) intersected with
    the regexes in ``musts`` and with the complements of those in ``nots``."""
    parts = [base, *(rx(m) for m in musts), *("~" + rx(n) for n in nots)]
    return parts[0] if len(parts) == 1 else "(" + " & ".join(parts) + ")"


_META = set("\\.+*?()|[]{}^$#&-~/")


def literal_regex(text: str) -> str:
    """A regex matching exactly ``text`` (Rust and Python syntax alike)."""
    out = []
    for ch in text:
        if ch in _META:
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return "".join(out)
