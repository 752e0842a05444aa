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

from conformbench.formats.nl.format import NaturalLanguageSchemaFormat
from conformbench.formats.nl.stated_keys import _referenced_unknowns, unknown_keywords

SCHEMAS = {g.id: g.schema for g in suite_groups() + optional_groups()}
SCHEMAS.update({f"golden:{name}": case.schema for name, case in GOLDEN.items()})
NL = NaturalLanguageSchemaFormat()


def _forms(value: Any) -> list[str]:
    """How a literal may be written: as JSON, or (strings) as is."""
    forms = [json.dumps(value, ensure_ascii=False)]
    if isinstance(value, str):
        forms.append(value)
    return forms


def _pairs(node: Any, skip: frozenset[str]) -> Iterator[tuple[str, Any]]:
    """(key, scalar) for every string/number reachable under a key (not
    under the annotation-only keys in ``skip``)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in skip:
                continue
            if isinstance(value, (str, int, float)) and not isinstance(value, bool):
                yield key, value
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, (str, int, float)) and not isinstance(item, bool):
                        yield key, item
            yield from _pairs(value, skip)
    elif isinstance(node, list):
        for item in node:
            yield from _pairs(item, skip)


def _keys(node: Any, skip: frozenset[str]) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield key
            if key not in skip:
                yield from _keys(value, skip)
    elif isinstance(node, list):
        for item in node:
            yield from _keys(item, skip)


def _left_out(schema: Any) -> frozenset[str]:
    """Keys JSON Schema does not define, which the rendering names only in
    its closing note (unless a $ref points into them)."""
    return frozenset(unknown_keywords(schema, _referenced_unknowns(schema)))


@pytest.mark.parametrize("schema", SCHEMAS.values(), ids=list(SCHEMAS))
def test_every_constraint_is_stated_with_its_value(schema: Any) -> None:
    text = NL.render(schema)
    lines = text.splitlines()
    skip = _left_out(schema)
    if skip:
        assert all(name in lines[-1] for name in skip) and lines[-1].startswith("(Not stated above")
    for key in _keys(schema, skip):
        assert any(form in text for form in _forms(key)), f"{key!r} missing:\n{text}"
    for key, value in _pairs(schema, skip):
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
        ({"contentEncoding": "base64"}, 'Keyword contentEncoding (contentEncoding): "base64".'),
        ({"type": "number", "maximum": 3, "exclusiveMaximum": True},
         "at most 3 (maximum), the maximum itself excluded (exclusiveMaximum)"),
        ({"type": "array", "items": [{"type": "string"}], "additionalItems": False},
         "No items are allowed after those (additionalItems)."),
        ({"dependencies": {"a": ["b"]}}, 'If "a" is present, these must also be present (dependencies): "b".'),
        ({"$ref": "#/definitions/x", "definitions": {"x": {}}},
         'It must also match the schema named "x" in definitions, at "#/definitions/x" ($ref).'),
        ({"$ref": "#/defs/x", "defs": {"x": {"type": "null"}}}, '- Named schemas (defs):\n  - "x": null (type).'),
    ],
)
def test_phrases(schema: Any, phrase: str) -> None:
    assert phrase in NL.render(schema)


def test_unknown_keywords_are_left_out_with_a_note() -> None:
    schema = {
        "type": "object",
        "decription": "a misspelt description",
        "properties": {"a": {"type": "string", "x-taplo": {"hidden": True}, "markdownDescription": "m"}},
    }
    text = NL.render(schema)
    assert "misspelt" not in text and "hidden" not in text and '"m"' not in text
    assert text.splitlines()[-1] == (
        "(Not stated above: keywords that JSON Schema does not define, which annotate but "
        "constrain nothing: decription, x-taplo, markdownDescription.)"
    )
    assert '"a" (optional): a string (type).' in text
    assert "Not stated" not in NL.render({"type": "string", "description": "known annotation"})
