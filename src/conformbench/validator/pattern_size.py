"""One bound on a regular expression's size, checked before any compile.

Regex compilers unroll counted repetitions: ``((a{999}){999}){999}`` is a
32-character pattern whose compiled form holds 10⁹ atoms, and compiling it
took 5.7 GB. ``expanded_size`` computes that unrolled size from the text
alone (multiplying each atom by the counts around it, without building
anything), and ``check_size`` refuses a pattern over ``MAX_PATTERN_SIZE``
with a reason. Every place conformbench compiles a user's or a model's
pattern (the validator, ``format: regex``, the dataset's string generator,
the grammar builders) calls ``check_size`` first, so an over-large pattern
is a refused pattern (an invalid answer, an excluded schema), never a
MemoryError.

The scan reads ECMA-262 and Python spellings alike: it only needs escapes,
character classes, groups and quantifiers, which both write the same way.
"""

from __future__ import annotations

import re

__all__ = ["MAX_PATTERN_SIZE", "PatternTooLarge", "check_size", "expanded_size"]

#: the most atoms a pattern may hold once its counted repetitions are
#: unrolled: far above real schemas' patterns (the largest shipped one is
#: under 200) and far below what exhausts memory
MAX_PATTERN_SIZE = 100_000

_COUNT = re.compile(r"\{([0-9]+)(?:(,)([0-9]*))?\}")
#: escapes followed by a braced argument that is not a quantifier
_BRACED_ESCAPES = frozenset("pPux")


class PatternTooLarge(ValueError):
    """The pattern's unrolled size is over the bound."""


def check_size(pattern: str, limit: int = MAX_PATTERN_SIZE) -> None:
    """PatternTooLarge when ``pattern`` unrolls to more than ``limit`` atoms."""
    size = expanded_size(pattern, limit)
    if size > limit:
        raise PatternTooLarge(f"pattern {_short(pattern)} unrolls to more than {limit:,} atoms "
                              "(counted repetitions multiply); refused before compiling")


def expanded_size(pattern: str, limit: int = MAX_PATTERN_SIZE) -> int:
    """The number of atoms ``pattern`` holds with every counted repetition
    unrolled; saturates just past ``limit`` so the arithmetic stays small."""
    cap = limit + 1
    # each frame: [size of the group so far, size of its last atom]
    stack: list[list[int]] = [[0, 0]]
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        atom = 1
        if char == "\\":
            i = _escape_end(pattern, i)
        elif char == "[":
            i = _class_end(pattern, i)
        elif char == "(":
            stack.append([0, 0])
            i += 1
            continue
        elif char == ")" and len(stack) > 1:
            atom = min(stack.pop()[0] + 1, cap)
            i += 1
        elif char == "{" and (count := _COUNT.match(pattern, i)):
            _repeat(stack[-1], _times(count), cap)
            i = count.end()
            continue
        elif char in "|*+?":
            i += 1
            continue
        else:
            i += 1
        frame = stack[-1]
        frame[0], frame[1] = min(frame[0] + atom, cap), atom
    return min(sum(frame[0] for frame in stack), cap)


def _repeat(frame: list[int], times: int, cap: int) -> None:
    """Multiply the frame's last atom by ``times`` (it is already counted once)."""
    total, last = frame
    grown = min(last * max(times, 1), cap)
    frame[0], frame[1] = min(total - last + grown, cap), grown


def _times(count: re.Match[str]) -> int:
    low, comma, high = count.group(1), count.group(2), count.group(3)
    if comma and high:
        return int(high) if len(high) < 12 else 10**12
    return (int(low) if len(low) < 12 else 10**12) + (1 if comma else 0)


def _escape_end(pattern: str, i: int) -> int:
    """The index after the escape at ``i`` (``\\p{L}`` and ``\\u{1F600}`` included)."""
    end = i + 2
    if end - 1 < len(pattern) and pattern[end - 1] in _BRACED_ESCAPES and pattern[end:end + 1] == "{":
        close = pattern.find("}", end)
        return close + 1 if close != -1 else end
    return end


def _class_end(pattern: str, i: int) -> int:
    """The index after the character class opening at ``i``."""
    j = i + 1
    if pattern[j:j + 1] == "^":
        j += 1
    if pattern[j:j + 1] == "]":  # a leading ``]`` is a literal in Python's reading
        j += 1
    while j < len(pattern):
        if pattern[j] == "\\":
            j += 2
        elif pattern[j] == "]":
            return j + 1
        else:
            j += 1
    return j


def _short(pattern: str) -> str:
    return repr(pattern if len(pattern) <= 60 else pattern[:57] + "...")
