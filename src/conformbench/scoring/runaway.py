"""Which cut answers end inside a runaway number sequence.

A diagnostic for reports, never part of a score: an answer cut at its token
budget in the middle of counting (``[1, 2, 3, ... 327``) or of one endless
number (``12400000000...``) would not have finished with a larger budget in
any check we ran (docs/tasks.md, "Budgets and cut answers, measured"). The
loop stop (``backends/loops.py``) cannot end these while they run: the text
never repeats exactly. Naming them in the tables tells a reader which cut
answers a larger budget is unlikely to rescue, without a rerun.

The rule reads only the end of the text: every run of digits counts as one
placeholder, and the tail must repeat with a period of at most
:data:`MAX_PERIOD` placeholders-or-characters at least :data:`MIN_PERIODS`
times, over at least :data:`MIN_CHARS` characters, with a number in the
period; or the text ends in one number written with at least
:data:`MIN_DIGITS` characters (digits, and at most one decimal point).
"""

from __future__ import annotations

import re

__all__ = ["MAX_PERIOD", "MIN_CHARS", "MIN_DIGITS", "MIN_PERIODS", "ends_in_runaway"]

MAX_PERIOD = 128
MIN_PERIODS = 8
MIN_CHARS = 250
MIN_DIGITS = 64

_NUMBER = "\0"
_DIGITS = re.compile(r"\d+(?:\.\d+)?")


def _tokens(text: str) -> tuple[list[str], list[int]]:
    """Characters, with each digit run as one placeholder; and where each starts."""
    tokens: list[str] = []
    starts: list[int] = []
    at = 0
    for match in _DIGITS.finditer(text):
        tokens += text[at:match.start()]
        starts += range(at, match.start())
        tokens.append(_NUMBER)
        starts.append(match.start())
        at = match.end()
    tokens += text[at:]
    starts += range(at, len(text))
    return tokens, starts


def _periodic_tail(tokens: list[str], period: int) -> int:
    """How many tokens at the end repeat with this period (the first copy included)."""
    k = len(tokens) - 1
    while k >= period and tokens[k] == tokens[k - period]:
        k -= 1
    return len(tokens) - 1 - k + period if k >= period - 1 else len(tokens)


def ends_in_runaway(text: str) -> bool:
    """Whether the text ends inside a runaway number sequence (see the module)."""
    if len(text) >= MIN_DIGITS and _DIGITS.fullmatch(text[-MIN_DIGITS:]):
        return True
    tokens, starts = _tokens(text)
    for period in range(1, MAX_PERIOD + 1):
        if period * MIN_PERIODS > len(tokens):
            break
        if _NUMBER not in tokens[len(tokens) - period:]:
            continue
        length = _periodic_tail(tokens, period)
        if length >= period * MIN_PERIODS and len(text) - starts[len(tokens) - length] >= MIN_CHARS:
            return True
    return False
