"""XML character data as our schema-guided XML reader reads it
(``formats.xml.codec``).

Text between tags is the value itself once the five predefined entities
and the character references ``&#9;``, ``&#10;``, ``&#13;`` are decoded
(each counts as one character). Under ``pattern``/``format`` the text
carries no references, so the text is the value. An element without a
``type`` attribute is read by the types its position allows: where a
number or a boolean is allowed, a string that looks like one needs
``type="str"``, so the untyped spelling leaves such text out.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from conformbench.engines.grammars.shapes import StringRule
from conformbench.engines.grammars.strings import intersect, length_regex, rx

__all__ = ["attribute_terminal", "text_terminal"]

_BAD = r"\x00-\x08\x0b\x0c\x0e-\x1f\x{fffe}\x{ffff}"
_REF = r"&(?:amp|lt|gt|quot|apos|#9|#10|#13);"
_TEXT_SAFE = f"[^<&>\\r{_BAD}]"
_TEXT_UNIT = f"(?:{_TEXT_SAFE}|{_REF})"
_ATTR_SAFE = f"[^<&>\"\\t\\n\\r{_BAD}]"
_ATTR_UNIT = f"(?:{_ATTR_SAFE}|{_REF})"
_WS = r"(?:\s|&#(?:9|10|13);)"
#: text the reader takes for a number / a boolean where those are allowed
_LOOKS_NUMERIC = rf"{_WS}*-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?{_WS}*"
_LOOKS_BOOLEAN = rf"{_WS}*(?:true|false){_WS}*"


def _terminal(safe: str, unit: str, rule: StringRule, nots: Sequence[str]) -> str:
    shortest = max(rule.min_length, 1)
    if rule.regexes:
        musts = [*rule.regexes, *filter(None, [length_regex(shortest, rule.max_length)])]
        return intersect(rx(f"{safe}+"), musts, nots)
    top = "" if rule.max_length is None else str(rule.max_length)
    return intersect(rx(f"{unit}{{{shortest},{top}}}"), [], nots)


@lru_cache(maxsize=2048)
def text_terminal(rule: StringRule, allowed: frozenset[str] = frozenset(), typed: bool = False) -> str:
    """Lark terminal text of non-empty character data for a string value;
    ``allowed``: the JSON types the reader allows here (an untyped element
    must not look like another of them); ``typed``: under ``type="str"``."""
    nots = []
    if not typed and "number" in allowed:
        nots.append(_LOOKS_NUMERIC)
    if not typed and "boolean" in allowed:
        nots.append(_LOOKS_BOOLEAN)
    return _terminal(_TEXT_SAFE, _TEXT_UNIT, rule, nots)


@lru_cache(maxsize=2048)
def attribute_terminal(pattern: str | None, exclude: tuple[str, ...]) -> str:
    """Lark terminal text of a non-empty ``key="..."`` value matching
    ``pattern`` (any when None) and no regex in ``exclude``."""
    rule = StringRule(regexes=(pattern,) if pattern else ())
    return _terminal(_ATTR_SAFE, _ATTR_UNIT, rule, exclude)
