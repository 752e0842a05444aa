"""YAML scalars as our strict reader reads them (``formats.yaml.safe``).

A string may be written plain, single-quoted or double-quoted. Plain text
is the value itself, so it must be legal plain YAML in block context (no
leading indicator, no ``: `` or `` #``, no trailing space) and must not
read as another type under the YAML 1.2 core schema (``true``, ``12``,
``null``, ``1e3``...). Quoted forms carry ``pattern``/``format`` only
without escapes, so the text between the quotes is the value; lengths
count escapes and doubled quotes as one character each.

Enum/const values and declared keys are written as literals: candidate
spellings are checked with the real reader before they enter a grammar.
"""

from __future__ import annotations

import json
from functools import lru_cache

from conformbench.engines.grammars.shapes import StringRule
from conformbench.engines.grammars.strings import ANY_TEXT, intersect, length_regex, rx
from conformbench.formats.yaml.safe import YamlDataError, dump_json_yaml, load_json_yaml
from conformbench.jsontypes import JSONValue

__all__ = [
    "BOOLEAN",
    "NULL",
    "key_literals",
    "key_terminal",
    "quoted_terminal",
    "string_terminal",
    "value_literals",
]

# characters a plain scalar never holds: controls, line breaks, spaces of
# every kind (the writer quotes those), BOM and non-characters
_BREAKS = r"\x00-\x1f\x7f-\x9f\x{2028}\x{2029}\x{feff}\x{fffe}\x{ffff}"
_SPACES = r"\x20\x{a0}\x{1680}\x{2000}-\x{200a}\x{202f}\x{205f}\x{3000}"
_CH = f"[^{_BREAKS}{_SPACES}:]"
_UNIT = f"(?:{_CH}|:+{_CH})"
_LATER = f"(?:[^{_BREAKS}{_SPACES}:#]|:+{_CH})"
_FIRST = f"(?:[^{_BREAKS}{_SPACES}:\\-?,\\[\\]{{}}#&*!|>'\"%@`]|[-?]{_UNIT}|:+{_CH})"
_PLAIN = f"{_FIRST}{_UNIT}*(?: +{_LATER}{_UNIT}*)*"

#: what the reader resolves to null, bool, int or float (YAML 1.2 core schema)
_CORE = (
    r"~|null|Null|NULL|true|True|TRUE|false|False|FALSE"
    r"|[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+"
    r"|[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)"
)
_MARKERS = rf"(?:---|\.\.\.){ANY_TEXT}"

_SQ_SAFE = f"[^'{_BREAKS}]"
_SQ_UNIT = f"(?:{_SQ_SAFE}|'')"
_DQ_SAFE = f"[^\"\\\\{_BREAKS}]"
_DQ_UNIT = (
    f"(?:{_DQ_SAFE}|\\\\[0abtnvfre \"/\\\\N_LP]|\\\\x[0-9a-fA-F]{{2}}"
    r"|\\u(?:[0-9a-cA-Ce-fE-F][0-9a-fA-F]{3}|[dD][0-7][0-9a-fA-F]{2}))"
)

#: the quote characters as Lark literals
_SQ = "\"'\""
_DQ = '"\\""'

NULL = ("null", "~")
BOOLEAN = ("true", "false", "True", "False")


def _constraints(rule: StringRule) -> list[str]:
    return [*rule.regexes, *filter(None, [length_regex(rule.min_length, rule.max_length)])]


def _quoted(quote: str, lark_quote: str, safe: str, unit: str, rule: StringRule, exclude: tuple[str, ...]) -> str:
    """A quoted spelling: escape-free text under regex constraints,
    otherwise any units counted as characters."""
    if rule.regexes or exclude:
        body = intersect(rx(f"{safe}*"), _constraints(rule), exclude)
        return f"{lark_quote} {body} {lark_quote}"
    top = "" if rule.max_length is None else str(rule.max_length)
    count = "*" if rule.min_length == 0 and rule.max_length is None else f"{{{rule.min_length},{top}}}"
    return rx(f"{quote}{unit}{count}{quote}")


@lru_cache(maxsize=2048)
def string_terminal(rule: StringRule, exclude: tuple[str, ...] = (), key: bool = False) -> str:
    """Lark terminal text of every spelling of a string value under
    ``rule``; values matching a regex in ``exclude`` are left out. Keys are
    taken as written, so a plain key may look like a number."""
    nots = [_MARKERS, *([] if key else [_CORE]), *exclude]
    plain = intersect(rx(_PLAIN), _constraints(rule), nots)
    single = _quoted("'", _SQ, _SQ_SAFE, _SQ_UNIT, rule, exclude)
    double = _quoted('"', _DQ, _DQ_SAFE, _DQ_UNIT, rule, exclude)
    return " | ".join([plain, single, double])


def quoted_terminal(rule: StringRule) -> str:
    """Lark terminal text of the quoted spellings only (flow style)."""
    single = _quoted("'", _SQ, _SQ_SAFE, _SQ_UNIT, rule, ())
    double = _quoted('"', _DQ, _DQ_SAFE, _DQ_UNIT, rule, ())
    return f"{single} | {double}"


#: undeclared keys: identifier-like when plain, anything when quoted, and
#: short (a YAML reader takes a key on its line only up to 1024 characters;
#: a long bound on the full plain-scalar syntax is costly for the lexer)
_KEY_LENGTH = 128
_PLAIN_KEY = rf"[A-Za-z_](?:[A-Za-z0-9_.\- ]{{0,{_KEY_LENGTH - 2}}}[A-Za-z0-9_.\-])?"


def key_terminal(pattern: str | None, exclude: tuple[str, ...]) -> str:
    """Lark terminal text of an undeclared key matching ``pattern`` (any key
    when None) and no regex in ``exclude``, followed by its colon."""
    musts = [pattern] if pattern else []
    plain = intersect(rx(_PLAIN_KEY), musts, exclude)
    if musts or exclude:  # escape-free quoted text: the text is the key
        single = f"{_SQ} {intersect(rx(f'{_SQ_SAFE}{{0,{_KEY_LENGTH}}}'), musts, exclude)} {_SQ}"
        double = f"{_DQ} {intersect(rx(f'{_DQ_SAFE}{{0,{_KEY_LENGTH}}}'), musts, exclude)} {_DQ}"
    else:
        short = StringRule(max_length=_KEY_LENGTH)
        single = _quoted("'", _SQ, _SQ_SAFE, _SQ_UNIT, short, ())
        double = _quoted('"', _DQ, _DQ_SAFE, _DQ_UNIT, short, ())
    return f'({plain} | {single} | {double}) ":"'


def _same(a: JSONValue, b: JSONValue) -> bool:
    return type(a) is type(b) and a == b


def _reads_as(document: str, expected: dict[str, JSONValue]) -> bool:
    """The one-line ``document`` reads back as exactly ``expected``."""
    if "\n" in document or "\r" in document:
        return False
    try:
        loaded = load_json_yaml(document)
    except YamlDataError:
        return False
    return isinstance(loaded, dict) and list(loaded) == list(expected) and all(
        _same(loaded[k], expected[k]) for k in expected)


def _spellings(value: JSONValue) -> list[str]:
    written = dump_json_yaml(value)
    written = written.removesuffix("\n...\n").removesuffix("\n")
    out = [written]
    if isinstance(value, str):
        out += [value, "'" + value.replace("'", "''") + "'", json.dumps(value, ensure_ascii=False)]
    elif value is None:
        out += list(NULL)
    elif isinstance(value, bool):
        out.append(str(value))
    else:
        out.append(json.dumps(value))
    return list(dict.fromkeys(out))


@lru_cache(maxsize=4096, typed=True)
def value_literals(value: JSONValue) -> tuple[str, ...]:
    """Spellings of a scalar that the reader reads back as exactly ``value``."""
    return tuple(s for s in _spellings(value) if _reads_as(f"k: {s}", {"k": value}))


@lru_cache(maxsize=4096)
def key_literals(name: str) -> tuple[str, ...]:
    """Spellings of a mapping key that the reader reads back as ``name``."""
    return tuple(s for s in _spellings(name) if _reads_as(f"{s}: 0", {name: 0}))
