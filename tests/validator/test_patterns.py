"""Bounded pattern matching: hostile patterns decided at once (RE2), ECMA-262
semantics where Python's ``re`` differs, the timed backtracking fallback and
its counts, and every place a pattern is matched (pattern, patternProperties,
additionalProperties, unevaluatedProperties, format: regex, the oracle).

The timeouts below are hang guards, not speed measurements: Python's ``re``
takes minutes to hours on these inputs (benchmarks/validate_speed.py measures
speed)."""

from __future__ import annotations

import random

import pytest

from conformbench.schemas.oracle import find_invalid, find_valid
from conformbench.schemas.regexgen import regex_samples
from conformbench.validator.ecma import EcmaSyntaxError, translate
from conformbench.validator.patterns import (
    PatternTimeout,
    compile_pattern,
    pattern_stats,
    search,
)
from conformbench.validator.schema_validator import validator_for

pytestmark = pytest.mark.timeout(60)

HOSTILE = [
    ("^(a+)+$", "a" * 40 + "!"),
    ("(x+x+)+y", "x" * 40),
    ("^(a|a?)+$", "a" * 40 + "!"),
    ("^(\\w+\\s?)*$", "word " * 12 + "!"),
    ("(.*a){20}", "a" * 19 + "b" * 40),
    ("^([a-zA-Z0-9])(([\\-.]|[_]+)?([a-zA-Z0-9]+))*(@){1}[a-z0-9]+[.]{1}(([a-z]{2,3})|([a-z]{2,3}[.]{1}[a-z]{2,3}))$",
     "a" * 40 + "!"),
]


@pytest.mark.parametrize(("pattern", "text"), HOSTILE)
def test_hostile_patterns_are_decided_by_re2(pattern: str, text: str) -> None:
    assert compile_pattern(pattern) is None  # RE2 runs it: no fallback
    assert search(pattern, text) is False
    v = validator_for({"type": "string", "pattern": pattern})
    (violation,) = v.violations(text)
    assert violation.keyword == "pattern" and "not decided" not in violation.message


@pytest.mark.parametrize(("pattern", "text"), HOSTILE[:3])
def test_hostile_patterns_as_property_names(pattern: str, text: str) -> None:
    schema = {"type": "object", "patternProperties": {pattern: {"type": "integer"}},
              "additionalProperties": False}
    (violation,) = validator_for(schema).violations({text: "x"})
    assert violation.keyword == "additionalProperties"
    later = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
             "allOf": [{"patternProperties": {pattern: True}}], "unevaluatedProperties": False}
    assert [x.keyword for x in validator_for(later).violations({text: 1})] == ["unevaluatedProperties"]
    draft2019 = {**later, "$schema": "https://json-schema.org/draft/2019-09/schema"}
    assert not validator_for(draft2019).is_valid({text: 1})


def test_a_hostile_pattern_reached_through_another_draft_is_bounded() -> None:
    """A subschema or ``$ref`` target that names its draft in ``$schema``
    gets that draft's bounded validator, not the library's own."""
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": ["object", "string"],
              "pattern": "^(a+)+$", "properties": {"self": {"$ref": "#"}}}
    assert not validator_for(schema).is_valid({"self": "a" * 40 + "!"})


def test_the_oracle_and_regexgen_stay_bounded() -> None:
    samples = list(regex_samples("^(a+)+$", random.Random(0), min_len=30, max_len=50))
    assert samples and all(set(s) == {"a"} for s in samples)
    assert list(regex_samples("(x+x+)+y", random.Random(0)))
    schema = {"type": "object", "properties": {"s": {"type": "string", "pattern": "^(a+)+$", "minLength": 40}},
              "patternProperties": {"^(x+x+)+y$": {"type": "integer"}}, "required": ["s"]}
    found = find_valid(schema)
    assert found.found
    invalid = find_invalid(schema, found.instance)
    assert {bad.keyword for bad in invalid.instances} >= {"pattern", "minLength"}


@pytest.mark.parametrize(("pattern", "text", "matches"), [
    ("^\\d+$", "١٢٣", False),           # \d is ASCII in ECMA (Python: Unicode digits)
    ("^\\w+$", "héllo", False),          # so is \w
    ("^\\s$", "\u00a0", True),           # \s is Unicode white space (RE2: ASCII only)
    ("^\\s$", "\u2028", True),
    ("^\\s$", "\ufeff", True),
    ("^\\S$", "\u00a0", False),
    ("^[a\\S]$", "\u3000", False),
    ("^.$", "\r", False),                # . excludes all line terminators
    ("^.$", "\u2029", False),
    ("^abc$", "abc\n", False),           # $ is the end of input (Python: also before a final \n)
    ("^[^]$", "\n", True),               # [^] is any character, [] none
    ("[]", "anything", False),
    ("^\\uD83D\\uDE00$", "\U0001F600", True),  # a surrogate pair is one character
    ("^\\u{1F600}$", "\U0001F600", True),
    ("^\\p{Lu}\\p{Ll}+$", "Émile", True),
    ("^\\p{Script=Greek}+$", "αβγ", True),
    ("^\\P{L}+$", "123", True),
    ("^\\p{Letter}+$", "abc1", False),
    ("^\\cJ$", "\n", True),
    ("\\bfoo\\b", "éfooé", True),        # \b is ASCII: é is not a word character
    ("^(?<word>a+)-\\k<word>$", "aa-aa", True),
    ("^(?<word>a+)-\\k<word>$", "aa-a", False),
    ("^(a)\\1$", "aa", True),
    ("^(?!foo)\\w+$", "food", False),
    ("^(?!foo)\\w+$", "bar", True),
    ("(?<=a)b", "ab", True),
    ("^#(?:[\\da-fA-F]{3}){1,2}$", "#a0f", True),  # groups that do not capture
    ("^#(?:[\\da-fA-F]{3}){1,2}$", "#a0f1", False),
    ("(?i)^abc$", "ABC", True),             # Python spellings, read as Python reads them
    ("^a(?#a comment)b$", "ab", True),
    ("^(?P<x>a)(?P=x)$", "aa", True),
])
def test_ecma_semantics(pattern: str, text: str, matches: bool) -> None:
    assert search(pattern, text) is matches
    assert validator_for({"type": "string", "pattern": pattern}).is_valid(text) is matches


def test_look_around_and_back_references_fall_back_and_are_counted() -> None:
    before = pattern_stats()
    fallback = compile_pattern("^(?!x)(a)\\1$")
    assert fallback is not None and "look-around" in fallback.reason and "back-reference" in fallback.reason
    assert search("^(?!x)(a)\\1$", "aa")
    after = pattern_stats()
    assert after.fallback_matches == before.fallback_matches + 1
    assert after.fallbacks["^(?!x)(a)\\1$"] == fallback.reason
    v = validator_for({"type": "string", "pattern": "(?=a)a\\Z"})
    assert [f.pattern for f in v.pattern_fallbacks] == ["(?=a)a\\Z"]


def test_a_hostile_fallback_runs_out_of_time_and_says_so() -> None:
    pattern, text = "^(?=(a|aa)+$)", "a" * 40 + "!"
    before = pattern_stats()
    with pytest.raises(PatternTimeout):
        search(pattern, text)
    (violation,) = validator_for({"type": "string", "pattern": pattern}).violations(text)
    assert "not decided" in violation.message
    assert pattern_stats().timeouts == before.timeouts + 2


def test_a_lone_surrogate_in_the_text_takes_the_fallback() -> None:
    before = pattern_stats().fallback_matches
    assert search("^a.b$", "a\ud800b")
    assert pattern_stats().fallback_matches == before + 1


def test_strict_ecma_syntax_for_the_regex_format() -> None:
    for python_only in ("(?P<name>x)", "(?i)abc", "\\a", "\\Z"):
        translate(python_only)  # a schema's pattern may use them
        with pytest.raises(EcmaSyntaxError):
            translate(python_only, strict=True)
    v = validator_for({"format": "regex"})
    assert v.is_valid("^\\p{L}+$") and not v.is_valid("(?P<name>x)") and not v.is_valid("(")


#: patterns from SchemaStore schemas (Apache-2.0), the shapes real schemas use
REAL = ["^#(?:[\\da-fA-F]{3}){1,2}$", "^(?:[a-z0-9_\\-.]+:)?[a-z0-9_\\-./]+$", "(?:.*/)?\\.\\.(?:/.*)?",
        "^\\d+(\\.\\d+){0,2}(-[0-9A-Za-z.-]+)?$", "^[A-Za-z_][A-Za-z0-9_]*$", "^(https?|ftp)://[^\\s/$.?#].[^\\s]*$",
        "^[^<>:;,?\"*|/]+$", "^\\$\\{[^}]+\\}$", "^[a-z]{2}(-[A-Z]{2})?$", "^\\s*\\S.*$", "^([01]?\\d|2[0-3]):[0-5]\\d$"]


@pytest.mark.parametrize("pattern", REAL)
def test_real_patterns_agree_with_python_on_ascii(pattern: str) -> None:
    """On ASCII text without line breaks ECMA and Python agree, so must we."""
    import re

    rng = random.Random(pattern)
    alphabet = "ab0159_-./:@#$ {}AZxyzf"
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 14))) for _ in range(300)]
    texts += list(regex_samples(pattern, random.Random(0)))
    assert compile_pattern(pattern) is None
    for text in texts:
        assert search(pattern, text) is bool(re.search(pattern, text)), text


@pytest.mark.parametrize("pattern", ["(", "[a-", "a{2,1}", "\\p{Nope}", "x**", "(?>a)"])
def test_bad_patterns_compile_nowhere(pattern: str) -> None:
    from conformbench.validator.patterns import PatternError

    with pytest.raises(PatternError):
        compile_pattern(pattern)
