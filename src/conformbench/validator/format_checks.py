"""Format checkers per draft: each draft's own ``format`` vocabulary, with
that draft's meaning (draft 3's ``time`` is ``hh:mm:ss``, draft 7's is an RFC
3339 time with offset; ``color`` and ``host-name`` exist in draft 3 only;
``duration`` and ``uuid`` from 2019-09 on). A format outside the schema's
draft is an annotation, as its specification says of unknown formats.

python-jsonschema registers a check only when its optional dependency
imports (``color`` needs webcolors, ``uri`` rfc3987, ...), and skips the
rest silently. Here a missing dependency is an error (FormatSupportError),
never a format quietly left unchecked. ``regex`` is checked as ECMA-262
through ``patterns`` (the same reading the ``pattern`` keyword gets).

Draft 3 also names ``utc-millisec``, ``style`` and ``phone``; the draft
gives none of them a grammar, so they stay annotations.
"""

from __future__ import annotations

from typing import Literal

from jsonschema import FormatChecker
from jsonschema.protocols import Validator

from conformbench.errors import ConformbenchError
from conformbench.validator.ecma import EcmaSyntaxError, translate
from conformbench.validator.patterns import PatternError, compile_pattern

__all__ = ["FORMATS", "FormatMode", "FormatSupportError", "format_checker", "schema_format_checker"]

#: assert: a value that breaks its format is a violation; annotate: format
#: is an annotation only (nothing is checked)
FormatMode = Literal["assert", "annotate"]

_DRAFT7 = ("date-time", "date", "time", "email", "idn-email", "hostname", "idn-hostname",
           "ipv4", "ipv6", "uri", "uri-reference", "iri", "iri-reference", "uri-template",
           "json-pointer", "relative-json-pointer", "regex")

#: the format vocabulary of each draft (python-jsonschema's version names)
FORMATS: dict[str, tuple[str, ...]] = {
    "draft3": ("date-time", "date", "time", "regex", "color", "uri", "email", "ip-address",
               "ipv6", "host-name"),
    "draft4": ("date-time", "email", "hostname", "ipv4", "ipv6", "uri"),
    "draft6": ("date-time", "email", "hostname", "ipv4", "ipv6", "uri", "uri-reference",
               "uri-template", "json-pointer"),
    "draft7": _DRAFT7,
    "draft2019-09": (*_DRAFT7, "duration", "uuid"),
    "draft2020-12": (*_DRAFT7, "duration", "uuid"),
}


class FormatSupportError(ConformbenchError):
    """A format of the draft's vocabulary has no checker (its optional
    dependency is missing)."""


def _is_regex(instance: object) -> bool:
    """An ECMA-262 regular expression, strictly (no Python spellings)."""
    if not isinstance(instance, str):
        return True
    try:
        translate(instance, strict=True)
    except EcmaSyntaxError as exc:
        raise PatternError(str(exc)) from None
    compile_pattern(instance)
    return True


def _is_pattern(instance: object) -> bool:
    """A pattern a schema may hold (Python spellings accepted: see ``ecma``)."""
    if isinstance(instance, str):
        compile_pattern(instance)
    return True


def _version(cls: type[Validator]) -> str:
    name = cls.__name__.removesuffix("Validator").lower()  # Draft201909 -> draft201909
    known = {key.replace("-", ""): key for key in FORMATS}
    if name not in known:
        raise FormatSupportError(f"no format vocabulary is known for {cls.__name__}")
    return known[name]


def _build(cls: type[Validator], names: tuple[str, ...], patterns: bool = False) -> FormatChecker:
    base: FormatChecker = cls.FORMAT_CHECKER
    checker = FormatChecker(formats=())
    for name in names:
        if name == "regex":
            checker.checks("regex", raises=PatternError)(_is_pattern if patterns else _is_regex)
        elif name in base.checkers:
            checker.checkers[name] = base.checkers[name]
        else:
            raise FormatSupportError(
                f"format {name!r} of {_version(cls)} cannot be checked: its optional dependency is "
                "missing (install jsonschema[format])")
    return checker


_CHECKERS: dict[tuple[type[Validator], bool], FormatChecker] = {}


def format_checker(cls: type[Validator], mode: FormatMode = "assert") -> FormatChecker | None:
    """The checker for instances of a ``cls`` schema (None: annotations)."""
    if mode == "annotate":
        return None
    if mode != "assert":
        raise ValueError(f"unknown format mode {mode!r}: assert or annotate")
    if (cls, False) not in _CHECKERS:
        _CHECKERS[cls, False] = _build(cls, FORMATS[_version(cls)])
    return _CHECKERS[cls, False]


def schema_format_checker(cls: type[Validator]) -> FormatChecker:
    """The checker for a schema against its metaschema: the draft's formats
    plus ``regex`` (metaschemas mark ``pattern`` values ``format: regex``
    even in drafts whose vocabulary lacks it: a pattern that no engine can
    compile makes the schema invalid; Python spellings are accepted)."""
    if (cls, True) not in _CHECKERS:
        names = FORMATS[_version(cls)]
        _CHECKERS[cls, True] = _build(cls, names if "regex" in names else (*names, "regex"), patterns=True)
    return _CHECKERS[cls, True]

