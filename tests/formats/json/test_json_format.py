"""Strict JSON answers and the JSON schema rendering."""

from __future__ import annotations

import json

import pytest

from conformbench.formats.base import (
    UnrepresentableValueError,
    output_formats,
    schema_formats,
)
from conformbench.formats.json.format import JsonOutput, json_depth

JSON = JsonOutput()


def test_render_keeps_key_order_and_unicode() -> None:
    schema = {"type": "object", "properties": {"zeta": {}, "alpha": {"const": "é"}}, "required": []}
    text = schema_formats.get("json")().render(schema)
    assert text == json.dumps(schema, indent=2, ensure_ascii=False)
    assert text.index("zeta") < text.index("alpha") and "é" in text


@pytest.mark.parametrize(
    ("text", "value", "source"),
    [
        ('{"a": 1}', {"a": 1}, "raw"),
        ('  [1, 2.0, true, null]\n', [1, 2.0, True, None], "raw"),
        ('The answer:\n```json\n{"a": "b"}\n```\nHope it helps.', {"a": "b"}, "fenced"),
        ('```\n"text"\n```', "text", "fenced"),
        ('```json\n{"a": 1}', {"a": 1}, "fenced"),
    ],
)
def test_accepted(text: str, value: object, source: str) -> None:
    parsed = JSON.parse(text)
    assert parsed.ok and parsed.source == source
    assert json.dumps(parsed.value) == json.dumps(value)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('Sure! {"a": 1}', "not valid JSON"),
        ("a: 1", "not valid JSON"),
        ("{'a': 1}", "not valid JSON"),
        ('{"a": 1,}', "not valid JSON"),
        ('{"a": 1, "a": 2}', "duplicate key 'a'"),
        ('{"a": NaN}', "NaN is not a JSON number"),
        ("[Infinity]", "Infinity is not a JSON number"),
        ("1e999", "overflows to infinity"),
        ("", "answer is empty"),
        ("```json\n\n```", "empty code block"),
        ('```json\n{"a": }\n```', "not valid JSON: Expecting value at line 1 column 7"),
        ("[" * 201 + "]" * 201, "nesting deeper than 200"),
    ],
)
def test_rejected_with_one_clear_reason(text: str, reason: str) -> None:
    parsed = JSON.parse(text)
    assert not parsed.ok and parsed.error is not None
    assert reason in parsed.error and "\n" not in parsed.error


def test_depth_limit_is_inclusive_and_ignores_strings() -> None:
    assert JSON.parse("[" * 200 + "]" * 200).ok
    assert JSON.parse('["' + "[" * 500 + '"]').ok
    assert json_depth('{"a": "[[[", "b": [[1]]}', 10) == 3


def test_dump_is_indented_json_and_refuses_nan() -> None:
    out = output_formats.get("json")()
    assert out.dump({"a": ["é"]}) == '{\n  "a": [\n    "é"\n  ]\n}'
    with pytest.raises(UnrepresentableValueError):
        out.dump(float("nan"))
