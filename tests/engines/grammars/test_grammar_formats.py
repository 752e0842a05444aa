"""Format and pattern regexes: a subset of what the validator accepts."""

from __future__ import annotations

import random

import pytest

from conformbench.engines.grammars.matcher import grammar_matcher
from conformbench.engines.grammars.random_documents import random_walk
from conformbench.engines.grammars.strings import FORMATS, pattern_regex
from conformbench.formats.yaml.format import YamlOutput
from conformbench.validator.schema_validator import validator_for

EXAMPLES = {
    "date": (["2024-02-29", "1999-12-31", "0001-01-01"], ["2023-02-29", "2024-04-31", "0000-01-01", "2024-1-01"]),
    "date-time": (["2024-03-15T09:30:00Z", "1999-12-31T23:59:59.5+01:00"], ["2024-03-15T24:00:00Z", "2024-03-15 09:30:00Z"]),
    "time": (["09:30:00Z"], ["9:30:00Z", "09:30:00"]),
    "email": (["ada@example.com", "a.b+c@x-y.org"], ["ada", "@x.org", "a@-x.org"]),
    "idn-email": (["josé@example.com"], ["josé", "a b@x.org"]),
    "uuid": (["123e4567-e89b-12d3-a456-426614174000"], ["123e4567e89b12d3a456426614174000"]),
    "ipv4": (["192.168.0.1", "0.0.0.0"], ["256.1.1.1", "01.2.3.4", "1.2.3"]),
    "uri": (["https://example.com/docs?q=1#top", "urn:isbn:0451450523"], ["example.com", "http://a b"]),
}


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_format_examples(accepts, fmt):
    good, bad = EXAMPLES[fmt]
    schema = {"type": "string", "format": fmt}
    check = validator_for(schema)
    for value in good:
        assert check.is_valid(value), value
        assert accepts(schema, "yaml", YamlOutput().dump(value)), value
    for value in bad:
        assert not accepts(schema, "yaml", YamlOutput().dump(value)), value


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_format_samples_pass_the_format_checker(vocab, fmt):
    schema = {"type": "string", "format": fmt}
    check = validator_for(schema)
    rng = random.Random(fmt)
    seen = 0
    for _ in range(8):
        walk = random_walk(grammar_matcher(schema, "xml", vocab), vocab, rng)
        if walk.finished:
            seen += 1
            value = YamlOutput().parse(YamlOutput().dump(_xml_value(walk.text, schema))).value
            assert check.is_valid(value), walk.text
    assert seen >= 4


def _xml_value(text: str, schema: dict) -> str:
    from conformbench.formats.xml.format import XmlOutput

    parsed = XmlOutput().parse(text, schema)
    assert parsed.ok, (text, parsed.error)
    assert isinstance(parsed.value, str)
    return parsed.value


@pytest.mark.parametrize(("pattern", "expected"), [
    ("^[a-z]+$", "(?:[a-z]+)"),
    ("[aeiou]", "(?s:.*)(?:[aeiou])(?s:.*)"),
    ("^v[0-9]+$", "(?:v[0-9]+)"),
    (r"^\d{3}$", "(?:[0-9]{3})"),  # JSON Schema's \d is ASCII
    ("a$", "(?s:.*)(?:a)"),
    (r"a\$", r"(?s:.*)(?:a\$)(?s:.*)"),
    ("^a|b$", None),
    ("(a)\\1", None),
    ("(?<=a)b", None),
    ("[", None),
])
def test_pattern_translation(pattern, expected):
    assert pattern_regex(pattern) == expected
