"""The English rendering states every constraint with its value.

Checked mechanically on every schema of the JSON-Schema-Test-Suite and the
golden schemas: every keyword and property name appears, and every string
or number a keyword carries appears on a line that names that keyword
(so "at least 3" cannot come from some other constraint's 3).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from formats_cases import GOLDEN
from formats_suite import optional_groups, suite_groups

from conformbench.formats.nl_format import NaturalLanguageSchemaFormat

SCHEMAS = {g.id: g.schema for g in suite_groups() + optional_groups()}
SCHEMAS.update({f"golden:{name}": case.schema for name, case in GOLDEN.items()})
NL = NaturalLanguageSchemaFormat()


def _forms(value: Any) -> list[str]:
    """How a literal may be written: as JSON, or (strings) as is."""
    forms = [json.dumps(value, ensure_ascii=False)]
    if isinstance(value, str):
        forms.append(value)
    return forms


def _pairs(node: Any) -> Iterator[tuple[str, Any]]:
    """(key, scalar) for every string/number reachable under a key."""
    if isinstance(node, dict):
        for key, value in node.items():
            if isinstance(value, (str, int, float)) and not isinstance(value, bool):
                yield key, value
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, (str, int, float)) and not isinstance(item, bool):
                        yield key, item
            yield from _pairs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _pairs(item)


def _keys(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield key
            yield from _keys(value)
    elif isinstance(node, list):
        for item in node:
            yield from _keys(item)


@pytest.mark.parametrize("schema", SCHEMAS.values(), ids=list(SCHEMAS))
def test_every_constraint_is_stated_with_its_value(schema: Any) -> None:
    text = NL.render(schema)
    lines = text.splitlines()
    for key in _keys(schema):
        assert any(form in text for form in _forms(key)), f"{key!r} missing:\n{text}"
    for key, value in _pairs(schema):
        found = any(
            any(f in line for f in _forms(key)) and any(f in line for f in _forms(value)) for line in lines
        )
        assert found, f"no line states {key}={value!r}:\n{text}"


def test_rendering_is_deterministic_and_reads_as_english() -> None:
    schema = GOLDEN["object_nested"].schema
    first = NL.render(schema)
    assert first == NL.render(json.loads(json.dumps(schema)))
    assert first.startswith("The value must be an object (type).")
    assert '  - "name" (required): a string (type), at least 1 character long (minLength)' in first
    assert "  - \"street\" (required)" in first and "    - Its properties (properties):" in first


@pytest.mark.parametrize(
    ("schema", "phrase"),
    [
        (True, "any value (the schema is true)"),
        (False, "no value at all is allowed (the schema is false)"),
        ({}, "The value can be any value."),
        ({"maxLength": 2}, "if it is a string: at most 2 characters long (maxLength)"),
        ({"type": "integer", "exclusiveMinimum": 1.5}, "greater than 1.5 (exclusiveMinimum)"),
        ({"type": "array", "uniqueItems": True}, "with no two items equal (uniqueItems)"),
        ({"type": "object", "additionalProperties": False}, "Properties are not allowed (additionalProperties)"),
        ({"const": None}, "exactly null (const)"),
        ({"anyOf": [{"type": "string"}]}, "It must match at least one of these schemas (anyOf):"),
        ({"x-custom": [1, "a"]}, 'Keyword x-custom (x-custom): [1, "a"].'),
    ],
)
def test_phrases(schema: Any, phrase: str) -> None:
    assert phrase in NL.render(schema)
