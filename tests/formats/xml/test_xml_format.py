"""XML: the typed-attribute schema rendering, and typed or schema-guided
answers (the mapping table in docs/formats.md)."""

from __future__ import annotations

from typing import Any

import pytest
from formats_suite import canon

from conformbench.errors import SchemaError
from conformbench.formats.base import UnrenderableSchemaError, UnrepresentableValueError
from conformbench.formats.xml.format import XmlOutput, XmlSchemaFormat

XML = XmlOutput()


def test_schema_rendering_is_typed_like_the_paper() -> None:
    schema = {"type": "object", "properties": {"first name": {"type": "number", "exclusiveMaximum": 5.5},
                                               "n": {"const": 1}, "b": {"const": True}},
              "patternProperties": {"^[a-z]+$": {}}, "required": [], "$schema": "x"}
    text = XmlSchemaFormat().render(schema)
    lines = text.splitlines()
    assert lines[0] == '<?xml version="1.0" encoding="UTF-8"?>'
    assert lines[1] == '<schema type="dict">'
    assert '    <entry key="first name" type="dict">' in lines
    assert '      <exclusiveMaximum type="float">5.5</exclusiveMaximum>' in lines
    assert '      <const type="int">1</const>' in lines and '      <const type="bool">true</const>' in lines
    assert '    <entry key="^[a-z]+$" type="dict"/>' in lines
    assert '  <required type="list"/>' in lines and '  <entry key="$schema" type="str">x</entry>' in lines
    assert canon(XmlSchemaFormat().load(text)) == canon(schema)


def test_schema_rendering_round_trips_floats_exactly() -> None:
    schema = {"enum": [0.1, 1e-05, 5.131849487240756, 1e300, -0.0, 3.0, 3, True, 1, "1", None, "", " a "]}
    assert canon(XmlSchemaFormat().load(XmlSchemaFormat().render(schema))) == canon(schema)


def test_characters_xml_cannot_carry_are_refused_by_name() -> None:
    with pytest.raises(UnrenderableSchemaError, match="U\\+0000"):
        XmlSchemaFormat().render({"const": "a\x00b"})
    with pytest.raises(UnrepresentableValueError, match="U\\+000C"):
        XML.dump({"a\x0cb": 1})


def test_schema_load_refuses_non_schemas() -> None:
    with pytest.raises(SchemaError, match="not an XML schema"):
        XmlSchemaFormat().load("<schema")
    with pytest.raises(SchemaError, match="dict or bool"):
        XmlSchemaFormat().load('<schema type="list"/>')
    with pytest.raises(SchemaError, match="not an XML schema"):
        XmlSchemaFormat().load('<schema type="dict"><a type="str">\ud800</a></schema>')


GUIDE = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer"},
        "score": {"type": "number"},
        "ok": {"type": "boolean"},
        "none": {"type": "null"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "pos": {"type": "object", "properties": {"x": {"type": "number"}}},
        "maybe": {"type": ["string", "null"]},
        "any": {},
    },
}


@pytest.mark.parametrize(
    ("xml", "value"),
    [
        ("<root><name>42</name></root>", {"name": "42"}),
        ("<root><name> a b </name></root>", {"name": " a b "}),
        ("<root><name/></root>", {"name": ""}),
        ("<root><age> 30 </age></root>", {"age": 30}),
        ("<root><age>30.0</age></root>", {"age": 30.0}),
        ("<root><age>thirty</age></root>", {"age": "thirty"}),
        ("<root><score>1e-05</score></root>", {"score": 1e-05}),
        ("<root><ok>true</ok></root>", {"ok": True}),
        ("<root><ok>yes</ok></root>", {"ok": "yes"}),
        ("<root><none/></root>", {"none": None}),
        ("<root><none>null</none></root>", {"none": None}),
        ("<root><maybe/></root>", {"maybe": ""}),
        ('<root><maybe type="null"/></root>', {"maybe": None}),
        ("<root><tags><item>a</item></tags></root>", {"tags": ["a"]}),
        ("<root><tags><tag>a</tag><tag>b</tag></tags></root>", {"tags": ["a", "b"]}),
        ("<root><tags/></root>", {"tags": []}),
        ("<root><pos><x>1</x></pos></root>", {"pos": {"x": 1}}),
        ("<root><any>7</any></root>", {"any": 7}),
        ("<root><any>true</any></root>", {"any": True}),
        ("<root><any>text</any></root>", {"any": "text"}),
        ("<root><any><item>1</item></any></root>", {"any": [1]}),
        ("<root><any><a>1</a><a>2</a></any></root>", {"any": [1, 2]}),
        ("<root><any><a>1</a></any></root>", {"any": {"a": 1}}),
        ('<root><any type="str">7</any></root>', {"any": "7"}),
        ('<root><entry key="first name">Ada</entry></root>', {"first name": "Ada"}),
    ],
)
def test_schema_guided_reading(xml: str, value: Any) -> None:
    parsed = XML.parse(xml, GUIDE)
    assert parsed.ok, parsed.error
    assert canon(parsed.value) == canon(value)


@pytest.mark.parametrize(
    ("xml", "value"),
    [
        ('<root type="dict"><a type="int">1</a><b type="float">1</b><c type="str"/></root>',
         {"a": 1, "b": 1.0, "c": ""}),
        ('<root type="list"><item type="bool">false</item><item type="null"/></root>', [False, None]),
        ('<?xml version="1.0" encoding="UTF-8"?>\n<anything type="int">-3</anything>', -3),
        ("<root><!-- note --><a>1</a></root>", {"a": 1}),
    ],
)
def test_typed_reading_without_a_schema(xml: str, value: Any) -> None:
    parsed = XML.parse(xml)
    assert parsed.ok, parsed.error
    assert canon(parsed.value) == canon(value)


@pytest.mark.parametrize(
    ("xml", "reason"),
    [
        ('<root type="integer">1</root>', "unknown type 'integer'"),
        ('<root type="int">abc</root>', "'abc' is not a valid int"),
        ('<root type="null">x</root>', "must be empty"),
        ('<root type="str"><a/></root>', "cannot have child elements"),
        ("<root>text<a>1</a></root>", "mixes text with child elements"),
        ('<root type="dict"><a>1</a><a>2</a></root>', "duplicate key 'a'"),
        ('<root color="red">1</root>', "unexpected attribute 'color'"),
        ('<root type="list"><entry key="a">1</entry></root>', "unexpected attribute 'key'"),
        ('<root type="dict"><x key="a">1</x></root>', "belongs on <entry>"),
        ('<root xmlns:n="urn:x"><n:a>1</n:a></root>', "namespaces are not supported"),
        ("<root>1</root><root>2</root>", "not valid XML: junk after document element"),
        ("<root>", "not valid XML"),
        ("just prose", "not valid XML"),
    ],
)
def test_rejected_with_one_clear_reason(xml: str, reason: str) -> None:
    parsed = XML.parse(xml)
    assert not parsed.ok and parsed.error is not None
    assert reason in parsed.error and "\n" not in parsed.error


def test_fenced_xml_with_prose() -> None:
    parsed = XML.parse("Answer:\n```xml\n<root><age>3</age></root>\n```\nbye", GUIDE)
    assert parsed.ok and parsed.source == "fenced" and parsed.value == {"age": 3}


def test_dump_types_only_where_the_schema_leaves_a_doubt() -> None:
    value = {"name": "42", "age": 3, "maybe": None, "any": "7", "x y": [1, "1"]}
    text = XML.dump(value, GUIDE)
    assert "<name>42</name>" in text and "<age>3</age>" in text
    assert '<maybe type="null"/>' in text and '<any type="str">7</any>' in text
    assert '<entry key="x y">' in text and '<item type="str">1</item>' in text
    assert canon(XML.parse(text, GUIDE).value) == canon(value)


def test_dump_without_schema_is_fully_typed() -> None:
    text = XML.dump({"a": [1, 1.5, "s", True, None, {}]})
    assert text.splitlines()[0] == '<root type="dict">'
    assert all("type=" in line for line in text.splitlines() if not line.strip().startswith("</"))
