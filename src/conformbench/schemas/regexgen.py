"""Strings that match a regular expression, built from Python's regex
parse tree (``re._parser``, the parser behind ``re.compile``).

JSON Schema's ``pattern`` is an unanchored ECMA-262 search. Candidates are
walked from Python's parse of the pattern (or, where Python cannot read the
ECMA spelling, of its Python rewrite from ``validation.ecma``) and kept
only when the validator's own bounded matcher (``validation.patterns``:
RE2, or a backtracking engine with a time limit) accepts them, so a hostile
pattern such as ``^(a+)+$`` costs microseconds per candidate. The walk is
deterministic for a given ``random.Random``; lookarounds are skipped (the
filter decides), back-references repeat the group's text.
"""

from __future__ import annotations

import random
import re
import re._constants as C
import re._parser as P
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from conformbench.validator.ecma import EcmaSyntaxError, translate
from conformbench.validator.patterns import PatternError, compile_pattern, matches

__all__ = ["regex_samples"]

_WORD = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"
_PRINTABLE = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ-_.:@ "
_CATEGORY = {
    C.CATEGORY_DIGIT: "0123456789",
    C.CATEGORY_NOT_DIGIT: "abcxyzABC_-",
    C.CATEGORY_SPACE: " ",
    C.CATEGORY_NOT_SPACE: "abcxyz019",
    C.CATEGORY_WORD: _WORD,
    C.CATEGORY_NOT_WORD: "-. @:",
}


#: longest sample built (hostile patterns like a{1000000000} stop here)
MAX_SAMPLE = 10_000


class _TooLong(Exception):
    pass


@dataclass
class _Walk:
    rng: random.Random
    #: extra repetitions beyond each repeat's minimum (capped by its maximum)
    extra: int
    groups: dict[int, str] = field(default_factory=dict)

    def seq(self, items: Any) -> str:
        text = "".join(self.node(op, av) for op, av in items)
        if len(text) > MAX_SAMPLE:
            raise _TooLong
        return text

    def node(self, op: Any, av: Any) -> str:
        if op is C.LITERAL:
            return chr(av)
        if op is C.NOT_LITERAL:
            return next(c for c in _PRINTABLE if ord(c) != av)
        if op is C.ANY:
            return self.rng.choice("abcxyz")
        if op is C.IN:
            return self._in(av)
        if op is C.BRANCH:
            return self.seq(self.rng.choice(av[1]))
        if op is C.SUBPATTERN:
            text = self.seq(av[3])
            if av[0] is not None:
                self.groups[av[0]] = text
            return text
        if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
            low, high, body = av
            high = low + self.extra if high is C.MAXREPEAT else min(high, low + self.extra)
            if high > MAX_SAMPLE:
                raise _TooLong
            return "".join(self.seq(body) for _ in range(high))
        if op is C.GROUPREF:
            return self.groups.get(av, "")
        if op is C.ATOMIC_GROUP:
            return self.seq(av)
        if op is C.CATEGORY:
            return self.rng.choice(_CATEGORY.get(av, "a"))
        return ""  # AT (anchors), ASSERT, ASSERT_NOT, GROUPREF_EXISTS: no text

    def _in(self, items: Any) -> str:
        negate = bool(items) and items[0][0] is C.NEGATE
        allowed: list[str] = []
        for op, av in items[1:] if negate else items:
            if op is C.LITERAL:
                allowed.append(chr(av))
            elif op is C.RANGE:
                allowed.extend(chr(c) for c in range(av[0], min(av[1], av[0] + 64) + 1))
            elif op is C.CATEGORY:
                allowed.extend(_CATEGORY.get(av, ""))
        if negate:
            banned = set(allowed)
            allowed = [c for c in _PRINTABLE if c not in banned]
        return self.rng.choice(allowed) if allowed else ""


def regex_samples(
    pattern: str, rng: random.Random, min_len: int = 0, max_len: int | None = None
) -> Iterator[str]:
    """Distinct strings matching ``pattern`` (as the validator matches it),
    shortest repetition counts first, with lengths in [min_len, max_len]
    where possible. Yields nothing for patterns neither engine compiles."""
    tree = _parse(pattern)
    if tree is None:
        return

    def compiled(text: str) -> bool:
        return matches(pattern, text)

    seen: set[str] = set()
    limit = max_len if max_len is not None else max(min_len, 8) + 64
    for extra in (0, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89):
        for _ in range(3):
            try:
                text = _Walk(rng, extra).seq(tree)
            except (_TooLong, RecursionError):
                return
            if len(text) < min_len:
                text = _pad(compiled, text, min_len)
            if text in seen or not min_len <= len(text) <= limit:
                continue
            if compiled(text):
                seen.add(text)
                yield text
        if len(seen) >= 6:
            return
    # an unanchored pattern also matches inside longer text: vary around it
    for text in sorted(seen):
        for affix in ("a", "b", "xy", "k9"):
            for wrapped in (affix + text, text + affix):
                if wrapped not in seen and min_len <= len(wrapped) <= limit and compiled(wrapped):
                    seen.add(wrapped)
                    yield wrapped


def _parse(pattern: str) -> Any:
    """Python's parse tree of the pattern as written, else of its Python
    rewrite; None when the validator's engines cannot compile it."""
    try:
        compile_pattern(pattern)
    except PatternError:
        return None
    for text in _spellings(pattern):
        try:
            return P.parse(text)
        except (re.error, RecursionError, OverflowError):
            continue
    return None


def _spellings(pattern: str) -> Iterator[str]:
    yield pattern
    try:
        yield translate(pattern).python
    except EcmaSyntaxError:
        return


def _pad(compiled: Any, text: str, min_len: int) -> str:
    """Unanchored patterns still match with filler around the match."""
    padded = text + "a" * (min_len - len(text))
    if compiled(padded):
        return padded
    padded = "a" * (min_len - len(text)) + text
    return padded if compiled(padded) else text
