"""The XML grammar on chosen documents: what our schema-guided dumper
writes and typed variants are taken; text the reader would read as
another type, and what the schema forbids, are refused."""

from __future__ import annotations

import random

import pytest

from conformbench.engines.grammars.matcher import grammar_matcher
from conformbench.engines.grammars.random_documents import random_walk
from conformbench.formats.xml.format import XmlOutput

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 12},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "tags": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+$"}, "minItems": 1},
        "home": {
            "type": "object",
            "properties": {"city": {"enum": ["Oslo", "12", 3, None]}, "any": {}},
            "required": ["city"],
        },
        "odd key": {"type": "boolean"},
    },
    "required": ["name", "age"],
    "additionalProperties": False,
}


@pytest.mark.parametrize("value", [
    {"name": "Bob", "age": 5},
    {"name": "12", "age": 0, "tags": ["a", "bc"], "home": {"city": "12", "any": "12"}},
    {"name": "", "age": 150, "home": {"city": None, "any": None}, "odd key": True},
    {"name": "a<b & c", "age": 7, "home": {"city": 3, "any": [1, "x", None]}},
])
@pytest.mark.parametrize("typed", [False, True])
def test_dumped_documents_are_accepted(accepts, value, typed):
    text = XmlOutput().dump(value) if typed else XmlOutput().dump(value, PERSON)
    assert accepts(PERSON, "xml", text), text


@pytest.mark.parametrize("text", [
    '<?xml version="1.0" encoding="UTF-8"?>\n<root>\n  <name>Bob</name>\n  <age>5</age>\n</root>\n',
    "<root>\n  <name></name>\n  <age>5</age>\n</root>",
    '<root>\n  <name>Bob</name>\n  <age>5</age>\n  <home>\n    <city>Oslo</city>\n    <any type="dict">\n'
    '      <entry key="x y"><item>1</item></entry>\n    </any>\n  </home>\n</root>',
])
def test_variants_are_accepted(accepts, text):
    assert accepts(PERSON, "xml", text)


@pytest.mark.parametrize(("text", "why"), [
    ("<root>\n  <name>Bob</name>\n  <age>5.0</age>\n</root>", "integer"),
    ("<root>\n  <name>Bob</name>\n  <age>-1</age>\n</root>", "minimum"),
    ("<root>\n  <name>abcdefghijklm</name>\n  <age>5</age>\n</root>", "maxLength"),
    ("<root>\n  <name>Bob</name>\n</root>", "required"),
    ("<root>\n  <age>5</age>\n  <name>Bob</name>\n</root>", "property order"),
    ("<root>\n  <name>Bob</name>\n  <age>5</age>\n  <nick>B</nick>\n</root>", "additionalProperties"),
    ("<root>\n  <name>Bob</name>\n  <age>5</age>\n  <tags/>\n</root>", "minItems"),
    ("<root>\n  <name>Bob</name>\n  <age>5</age>\n  <home>\n    <city>Paris</city>\n  </home>\n</root>", "enum"),
    ("<root>\n  <name>Bob</name>\n  <age>5</age>\n  <odd key>true</odd key>\n</root>", "not an XML name"),
    ("<root>\n  <name>B</name>\n  <age>5</age>\n  <name>B</name>\n</root>", "duplicate"),
    ("<root>\n  <name>Bob</name>\n  <age>5</age>\n</toor>", "closing tag"),
])
def test_refused(accepts, text, why):
    assert not accepts(PERSON, "xml", text), why


def test_text_that_reads_as_another_type_needs_its_type(accepts):
    schema = {"type": ["string", "integer"], "minimum": 100}
    assert accepts(schema, "xml", "<root>120</root>")
    assert accepts(schema, "xml", '<root type="str">12</root>')
    assert accepts(schema, "xml", "<root>twelve</root>")
    # untyped, 12 is read as the integer 12, which the minimum forbids
    assert not accepts(schema, "xml", "<root>12</root>")
    assert not accepts(schema, "xml", "<root> 12\n</root>")


def test_undeclared_keys_are_entries(accepts):
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": {"type": "string"}}
    assert accepts(schema, "xml", '<root>\n  <a>1</a>\n  <entry key="b c">x</entry>\n</root>')
    assert not accepts(schema, "xml", '<root>\n  <entry key="a">x</entry>\n</root>')  # a declared key
    assert not accepts(schema, "xml", '<root>\n  <entry key="b">1</entry>\n  <entry key="c">1</entry>\n  <a>1</a>\n</root>')
    # the dumper writes an undeclared key as an entry too, even where it is an
    # XML name: no context-free grammar can close an element it did not name itself
    assert XmlOutput().dump({"b": "x"}, schema) == '<root>\n  <entry key="b">x</entry>\n</root>'
    assert accepts(schema, "xml", XmlOutput().dump({"b": "x"}, schema))
    assert not accepts(schema, "xml", "<root>\n  <b>x</b>\n</root>")


@pytest.mark.parametrize("schema", [{"type": "string"}, {"type": "object"}, {}, PERSON])
def test_random_documents_read_back(vocab, schema):
    rng = random.Random(5)
    finished = 0
    for _ in range(12):
        walk = random_walk(grammar_matcher(schema, "xml", vocab), vocab, rng)
        if not walk.finished:
            continue
        finished += 1
        parsed = XmlOutput().parse(walk.text, schema)
        assert parsed.ok or "duplicate key" in (parsed.error or ""), (walk.text, parsed.error)
        if parsed.ok and schema.get("type") == "string":
            assert isinstance(parsed.value, str), walk.text
    assert finished >= 6
