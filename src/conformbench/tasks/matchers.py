"""Answer matchers of the custom task: how a read answer is compared with
the gold answer of a question (task options ``match``, ``normalize`` and
``tolerance``; flags ``--match``, ``--normalize``, ``--tolerance``).

``exact`` (the default) is the comparison the custom task always made, so
replays made before matchers existed score as before. An unconstrained
answer is a sentence (``The capital of Germany is Berlin.``); ``contains``
is the matcher that reads it fairly.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

import re2

from conformbench.errors import UsageError
from conformbench.registry import did_you_mean
from conformbench.tasks.extract import MAX_TEXT_CHARS, extract_number, normalize_text

__all__ = ["DEFAULT_MATCH", "DEFAULT_NORMALIZE", "MATCHERS", "NORMALIZERS", "AnswerMatcher"]

DEFAULT_MATCH = "exact"
DEFAULT_NORMALIZE = "casefold"
_ARTICLES = re.compile(r"\b(?:a|an|the)\b")


def _alnum(text: str) -> str:
    # punctuation (every Unicode P* category) becomes a space, so "U.S.A." and "U S A" meet
    kept = "".join(" " if unicodedata.category(c).startswith("P") else c for c in text)
    return normalize_text(kept)


#: name -> (function, what it does, as `list` and --help say it)
NORMALIZERS: dict[str, tuple[Callable[[str], str], str]] = {
    "casefold": (normalize_text, "case-folded, runs of whitespace made one space (default)"),
    "alnum": (_alnum, "as casefold, with punctuation removed"),
    "squad": (lambda t: normalize_text(_ARTICLES.sub(" ", _alnum(t))),
              "as alnum, without the articles a/an/the (SQuAD's answer normalisation)"),
    "none": (str.strip, "compared as written (only the ends stripped)"),
}


def _number(text: str) -> Decimal | None:
    try:
        value = Decimal(text.strip().replace(",", ""))
    except InvalidOperation:
        return None
    return value if value.is_finite() else None


@dataclass(frozen=True)
class AnswerMatcher:
    """One matcher, checked when the task is built; ``matches`` never raises."""

    match: str = DEFAULT_MATCH
    normalize: str = DEFAULT_NORMALIZE
    tolerance: float | None = None

    def __post_init__(self) -> None:
        for option, value, table in (("match", self.match, MATCHERS),
                                     ("normalize", self.normalize, NORMALIZERS)):
            if value not in table:
                raise UsageError(f"task custom: unknown {option} {value!r}"
                                 f"{did_you_mean(value, list(table))}; known: {', '.join(table)}")
        if self.tolerance is not None:
            if self.match != "number":
                raise UsageError(f"task custom: tolerance applies to match 'number', not {self.match!r}")
            if not self.tolerance >= 0:  # also refuses NaN
                raise UsageError(f"task custom: tolerance must be 0 or more, not {self.tolerance}")

    @property
    def label(self) -> str:
        """The correctness label of reports (``exact match`` as before)."""
        if self.match == "number":
            return f"number match (tolerance {self.tolerance or 0:g})"
        extra = "" if self.normalize == DEFAULT_NORMALIZE else f", {self.normalize}"
        return f"{self.match} match{extra}"

    def check_gold(self, gold: str) -> str | None:
        """Why ``gold`` cannot be a gold answer under this matcher (None: it can)."""
        if self.match == "number" and _number(gold) is None:
            return f"answer {gold!r} is not a number (match 'number')"
        if self.match == "regex":
            try:
                self._pattern(gold)
            except re2.error as exc:
                why = exc.args[0] if exc.args else ""
                why = why.decode(errors="replace") if isinstance(why, bytes) else str(why)
                return f"answer {gold!r} is not a regular expression RE2 takes ({why})"
        return None

    def _norm(self, text: str) -> str:
        return NORMALIZERS[self.normalize][0](text[:MAX_TEXT_CHARS])

    def _pattern(self, gold: str) -> Any:
        options = re2.Options()
        options.log_errors = False
        options.case_sensitive = self.normalize == "none"
        return re2.compile(gold, options)

    def matches(self, answer: str, gold: str) -> bool:
        return MATCHERS[self.match][0](self, answer, gold)


def _exact(m: AnswerMatcher, answer: str, gold: str) -> bool:
    return m._norm(answer) == m._norm(gold)


def _contains(m: AnswerMatcher, answer: str, gold: str) -> bool:
    want = m._norm(gold)
    # word-bounded: gold "7" is not found in "17", "cat" not in "category"
    return bool(want) and re.search(rf"(?<!\w){re.escape(want)}(?!\w)", m._norm(answer)) is not None


def _regex(m: AnswerMatcher, answer: str, gold: str) -> bool:
    # RE2: linear time whatever the pattern and the model's text
    return m._pattern(gold).search(m._norm(answer)) is not None


def _number_match(m: AnswerMatcher, answer: str, gold: str) -> bool:
    want = _number(gold)
    found = _number(answer)
    if found is None:
        read = extract_number(answer)
        found = read.value if read is not None else None
    if want is None or found is None:
        return False
    return abs(found - want) <= Decimal(str(m.tolerance or 0))


#: name -> (function, what it does)
MATCHERS: dict[str, tuple[Callable[[AnswerMatcher, str, str], bool], str]] = {
    "exact": (_exact, "the whole answer equals the gold answer after normalising (default)"),
    "contains": (_contains, "the normalised gold answer appears in the answer as whole words"),
    "regex": (_regex, "the gold answer is an RE2 pattern searched in the normalised answer "
                      "(case-insensitive unless normalize is none)"),
    "number": (_number_match, "the answer's number is within tolerance of the gold number"),
}
