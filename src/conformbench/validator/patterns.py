"""Bounded regular-expression matching for schema patterns.

Every pattern is read as ECMA-262 (``ecma.translate``) and run on RE2, whose
matching time is linear in the text: ``^(a+)+$`` on forty ``a`` and a ``!``
is decided in microseconds where Python's ``re`` backtracks for minutes.
A pattern RE2 cannot run (look-around, back-references, a repetition count
over 1000, an unknown Unicode property) falls back to the backtracking
``regex`` module with a time limit per match; so does a text that holds a
lone surrogate (RE2 reads UTF-8, which cannot carry one). A pattern whose
counted repetitions unroll past ``pattern_size.MAX_PATTERN_SIZE`` is a
PatternError before either engine sees it. Every fallback is
counted (``PatternStats``) so a report can show it, and a match that runs
out of time raises ``PatternTimeout``: the caller decides (the validator
reports the value as not shown to match, with that reason).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import re2
import regex

from conformbench.validator.ecma import EcmaSyntaxError, translate
from conformbench.validator.pattern_size import PatternTooLarge, check_size

__all__ = [
    "FALLBACK_TIMEOUT_S",
    "Fallback",
    "PatternError",
    "PatternStats",
    "PatternTimeout",
    "compile_pattern",
    "fallbacks_of",
    "matches",
    "pattern_stats",
    "search",
]

#: time limit of one match on the backtracking engine
FALLBACK_TIMEOUT_S = 0.1
#: RE2 memory budget per pattern (its default, 8 MiB, is too small for the
#: long alternations that real schemas hold)
_RE2_MAX_MEM = 64 << 20
_CACHE_LIMIT = 20_000


class PatternError(ValueError):
    """The pattern is not a regular expression either engine can compile."""


class PatternTimeout(Exception):
    """The backtracking engine ran out of time deciding a match."""

    def __init__(self, pattern: str, length: int, seconds: float) -> None:
        super().__init__(f"pattern {pattern!r} was not decided on a {length}-character text "
                         f"within {seconds:g} s (backtracking engine)")
        self.pattern = pattern


@dataclass(frozen=True)
class Fallback:
    """A pattern that runs on the backtracking engine, and why."""

    pattern: str
    reason: str


@dataclass
class PatternStats:
    """Process-wide counts (the validator is shared, so are these)."""

    re2_matches: int = 0
    fallback_matches: int = 0
    timeouts: int = 0
    #: every pattern compiled for the fallback engine, with its reason
    fallbacks: dict[str, str] = field(default_factory=dict)

    def snapshot(self) -> PatternStats:
        return PatternStats(self.re2_matches, self.fallback_matches, self.timeouts, dict(self.fallbacks))


class _Compiled:
    """One pattern, compiled for RE2 or (with a reason) for ``regex``."""

    __slots__ = ("_backup", "fallback", "pattern", "python", "re2")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        try:
            check_size(pattern)
            translation = translate(pattern)
        except (EcmaSyntaxError, PatternTooLarge) as exc:
            raise PatternError(str(exc)) from None
        self.python = translation.python
        self.re2: Any = None
        self._backup: Any = None
        self.fallback = translation.backtracking
        if self.fallback is None:
            try:
                self.re2 = re2.compile(translation.re2, _OPTIONS)
            except re2.error as exc:
                self.fallback = "RE2: " + (exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes)
                                           else str(exc))
            except UnicodeEncodeError:
                self.fallback = "RE2: a lone surrogate in the pattern"
        if self.re2 is None:
            self._backup = self.backup()

    def backup(self) -> Any:
        """The ``regex`` compilation (built on first need)."""
        if self._backup is None:
            try:
                self._backup = regex.compile(self.python, flags=regex.ASCII | regex.V0)
            except (regex.error, OverflowError, RecursionError, ValueError) as exc:
                raise PatternError(f"invalid pattern {self.pattern!r}: {exc}") from None
        return self._backup


def _options() -> Any:
    options = re2.Options()
    options.log_errors = False
    options.max_mem = _RE2_MAX_MEM
    return options


_OPTIONS = _options()
_LOCK = threading.Lock()
_CACHE: dict[str, _Compiled] = {}
_STATS = PatternStats()


def compile_pattern(pattern: str) -> Fallback | None:
    """Compile (and cache) ``pattern``; PatternError if neither engine can.
    Returns the Fallback when it runs on the backtracking engine."""
    compiled = _get(pattern)
    return Fallback(pattern, compiled.fallback) if compiled.fallback else None


def _get(pattern: str) -> _Compiled:
    found = _CACHE.get(pattern)
    if found is not None:
        return found
    compiled = _Compiled(pattern)
    with _LOCK:
        if len(_CACHE) >= _CACHE_LIMIT:
            _CACHE.clear()
        _CACHE[pattern] = compiled
        if compiled.fallback:
            _STATS.fallbacks[pattern] = compiled.fallback
    return compiled


def search(pattern: str, text: str, timeout: float = FALLBACK_TIMEOUT_S) -> bool:
    """Whether ``pattern`` (ECMA-262) matches somewhere in ``text``.
    PatternError for a bad pattern, PatternTimeout when the backtracking
    fallback runs out of time."""
    compiled = _get(pattern)
    if compiled.re2 is not None:
        try:
            found = compiled.re2.search(text) is not None
            _STATS.re2_matches += 1
            return found
        except UnicodeEncodeError:  # a lone surrogate: RE2 reads UTF-8 only
            pass
    _STATS.fallback_matches += 1
    try:
        return compiled.backup().search(text, timeout=timeout) is not None
    except TimeoutError:
        _STATS.timeouts += 1
        raise PatternTimeout(pattern, len(text), timeout) from None


def matches(pattern: str, text: str, undecided: list[str] | None = None) -> bool:
    """``search`` for callers that must not fail: a bad pattern matches
    nothing, and so does an undecided match (its reason is appended to
    ``undecided``)."""
    try:
        return search(pattern, text)
    except PatternTimeout as exc:
        if undecided is not None:
            undecided.append(str(exc))
        return False
    except PatternError:
        return False


def fallbacks_of(patterns: Iterable[str]) -> list[Fallback]:
    """The patterns among ``patterns`` that run on the fallback engine
    (each compiled once; bad ones are skipped: the metaschema reports them)."""
    out: list[Fallback] = []
    for pattern in dict.fromkeys(patterns):
        try:
            found = compile_pattern(pattern)
        except PatternError:
            continue
        if found is not None:
            out.append(found)
    return out


def pattern_stats() -> PatternStats:
    """A copy of the process-wide counts."""
    return _STATS.snapshot()
