"""Formats per draft: each schema's ``$schema`` picks its draft's format
vocabulary and meaning; formats outside it are annotations; a format of the
vocabulary is never silently left unchecked; formats can be switched to
annotations by the validator factory."""

from __future__ import annotations

import jsonschema
import pytest

from conformbench.validator.format_checks import FORMATS, format_checker
from conformbench.validator.schema_validator import validator_for

DRAFT3 = "http://json-schema.org/draft-03/schema#"
DRAFT4 = "http://json-schema.org/draft-04/schema#"
DRAFT6 = "http://json-schema.org/draft-06/schema#"
DRAFT7 = "http://json-schema.org/draft-07/schema#"
DRAFT2019 = "https://json-schema.org/draft/2019-09/schema"
DRAFT2020 = "https://json-schema.org/draft/2020-12/schema"


def _valid(draft: str, fmt: str, value: object, formats: str = "assert") -> bool:
    return validator_for({"$schema": draft, "format": fmt}, formats=formats).is_valid(value)  # type: ignore[arg-type]


@pytest.mark.parametrize(("draft", "fmt", "good", "bad"), [
    (DRAFT3, "time", "12:30:00", "12:30"),             # draft 3: hh:mm:ss
    (DRAFT3, "time", "23:59:59", "25:00:00"),
    (DRAFT7, "time", "12:30:00Z", "12:30:00"),         # draft 7 on: RFC 3339, offset required
    (DRAFT3, "color", "red", "notacolor"),              # CSS 2.1 colours, draft 3 only
    (DRAFT3, "color", "#ff0000", "#ff00"),
    (DRAFT3, "host-name", "example.com", "-bad-.com"),
    (DRAFT3, "ip-address", "192.168.0.1", "300.1.1.1"),
    (DRAFT3, "date", "2024-02-29", "2023-02-29"),
    (DRAFT3, "regex", "^a+$", "("),
    (DRAFT4, "ipv4", "10.0.0.1", "10.0.0"),
    (DRAFT4, "hostname", "example.com", "-bad-.com"),
    (DRAFT6, "json-pointer", "/a/b", "a/b"),
    (DRAFT6, "uri-reference", "../x", "\\\\x"),
    (DRAFT7, "date", "2024-02-29", "2023-02-29"),
    (DRAFT7, "regex", "^\\p{L}$", "(?P<n>x)"),
    (DRAFT7, "relative-json-pointer", "1/a", "/a"),
    (DRAFT2019, "duration", "P1D", "1D"),
    (DRAFT2020, "uuid", "2eb8aa08-aa98-11ea-b4aa-73b441d16380", "2eb8aa08"),
])
def test_a_format_of_the_draft_is_checked_with_its_meaning(draft: str, fmt: str, good: str, bad: str) -> None:
    assert _valid(draft, fmt, good)
    assert not _valid(draft, fmt, bad)


@pytest.mark.parametrize(("draft", "fmt", "value"), [
    (DRAFT7, "color", "notacolor"),        # color is draft 3's alone
    (DRAFT2020, "host-name", "-bad-.com"),
    (DRAFT2020, "ip-address", "300.1.1.1"),
    (DRAFT4, "date", "2023-02-29"),        # date arrived in draft 7
    (DRAFT6, "time", "12:30"),
    (DRAFT4, "regex", "("),                # regex: drafts 3 and 7 on
    (DRAFT6, "regex", "("),
    (DRAFT3, "idn-email", "no at sign"),   # idn-email: draft 7 on
    (DRAFT7, "duration", "1D"),            # duration, uuid: 2019-09 on
    (DRAFT7, "uuid", "2eb8aa08"),
])
def test_a_format_outside_the_draft_is_an_annotation(draft: str, fmt: str, value: str) -> None:
    assert _valid(draft, fmt, value)


def test_formats_can_be_annotations() -> None:
    assert _valid(DRAFT2020, "date", "not a date", formats="annotate")
    assert not _valid(DRAFT2020, "date", "not a date")
    assert format_checker(jsonschema.Draft202012Validator, "annotate") is None
    with pytest.raises(ValueError, match="format mode"):
        format_checker(jsonschema.Draft202012Validator, "lenient")  # type: ignore[arg-type]


@pytest.mark.parametrize("cls", [
    jsonschema.Draft3Validator, jsonschema.Draft4Validator, jsonschema.Draft6Validator,
    jsonschema.Draft7Validator, jsonschema.Draft201909Validator, jsonschema.Draft202012Validator,
])
def test_every_format_of_every_draft_has_a_checker(cls: type[jsonschema.Draft202012Validator]) -> None:
    """python-jsonschema drops a check whose optional dependency is missing;
    building the checker here raises instead (FormatSupportError)."""
    checker = format_checker(cls)
    assert checker is not None
    version = {v.replace("-", ""): v for v in FORMATS}[cls.__name__.removesuffix("Validator").lower()]
    assert sorted(checker.checkers) == sorted(FORMATS[version])


def test_schema_patterns_are_checked_in_every_draft() -> None:
    """Metaschemas mark pattern values format: regex even where the draft's
    vocabulary lacks the format: a pattern no engine compiles is an error."""
    from conformbench.errors import SchemaError

    for draft in (DRAFT4, DRAFT6):
        with pytest.raises(SchemaError):
            validator_for({"$schema": draft, "pattern": "("})
        assert validator_for({"$schema": draft, "pattern": "(?P<n>x)"}).is_valid("x")
