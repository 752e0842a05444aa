"""JSON Schema -> Lark grammar of our XML answers (the schema-guided form).

The layout is the one ``formats.xml.format`` dumps with a schema: root
element ``<root>``, object members as elements named by their key
(``<entry key="...">`` when the key is no XML name), array items as
``<item>``, one element per line, two spaces per level, ``<x/>`` for empty
values. A ``type="..."`` attribute may be written wherever the reading
stays the same, and is required where the element's text would be read as
another type (the string ``"12"`` where numbers are allowed). A value the
schema leaves open (``{}``) takes any typed or untyped element, nested
without limit (its children on lines of any indentation).

Undeclared keys are written ``<entry key="...">``, never as element names:
a context-free grammar cannot make ``</intent>`` repeat a name it did not
know in advance. (llguidance's parametric rules can carry a name from the
opening to the closing tag character by character, but one-character
lexemes after every ``<`` blow its per-token mask computation past its
item limit: measured at about a second per token with the limit raised.)

Character data is in ``xml_text``; what the grammar does not state is
listed by ``read.unenforced_keywords``.
"""

from __future__ import annotations

from dataclasses import dataclass

from conformbench.engines.grammars.lark_writer import LarkBuilder, seq
from conformbench.engines.grammars.numbers import INTEGER, number_terminal
from conformbench.engines.grammars.objects import array_body, object_body
from conformbench.engines.grammars.read import const_shape, read_shape
from conformbench.engines.grammars.shapes import NumberRule, Shape, StringRule
from conformbench.engines.grammars.strings import intersect, lit, literal_regex, rx
from conformbench.engines.grammars.xml_text import attribute_terminal, text_terminal
from conformbench.errors import UnsupportedSchemaError
from conformbench.formats.xml.codec import XmlDataError, _escape, _member_tag, decode, encode, read_xml
from conformbench.formats.xml.guide import Guide, allowed_types
from conformbench.jsontypes import JSONValue, Schema

__all__ = ["xml_grammar"]

_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n'


@dataclass(frozen=True)
class _Tag:
    """How an element opens: ``head`` is the Lark text of ``<name`` (with
    ``key="..."`` for entries), ``key`` the fixed key of an entry, if any."""

    head: str
    name: str
    key: str | None = None

    @classmethod
    def fixed(cls, name: str, key: str | None = None) -> _Tag:
        attr = "" if key is None else f' key="{_escape(key, attribute=True)}"'
        return cls(lit(f"<{name}{attr}"), name, key)

    @classmethod
    def entry(cls, key_terminal: str) -> _Tag:
        """An ``<entry>`` whose key is any text of ``key_terminal``."""
        return cls(f'"<entry key=\\"" {key_terminal} "\\""', "entry")

    def end(self) -> str:
        return lit(f"</{self.name}>")

    def closed(self, text: str) -> str | None:
        """The element: head, then ``text`` (attributes, content, closing tag)."""
        return seq(self.head, lit(text))


_ROOT = _Tag.fixed("root")
_ITEM = _Tag.fixed("item")


def _indent(depth: int) -> str:
    return lit("\n" + "  " * depth)


def _same(a: JSONValue, b: JSONValue) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def _spellings(value: JSONValue, guide: Guide, tag: _Tag) -> list[str]:
    """What may follow the tag's head for a scalar ``value``: the guided
    and the typed spellings, each read back by the real reader."""
    name = tag.name
    # a variable entry key is spelled with a stand-in: what follows the head is the same
    head = (tag.key if tag.key is not None else "k") if name == "entry" else None
    opening = "<" + (name if head is None else f'{name} key="{_escape(head, attribute=True)}"')
    out: list[str] = []
    for lines in (encode(value, guide, (name, head)), encode(value, None, (name, head))):
        rest = lines[0][len(opening):]
        out.append(rest)
        if rest.endswith("/>"):
            out.append(rest[:-2] + f"></{name}>")
    kept = []
    for rest in dict.fromkeys(out):
        try:
            read = decode(read_xml(opening + rest), guide, in_object=head is not None)
        except XmlDataError:
            continue
        if _same(read, value):
            kept.append(rest)
    return kept


class _XmlCompiler:
    def __init__(self) -> None:
        self.b = LarkBuilder("x")

    def element(self, shape: Shape, tag: _Tag, depth: int) -> str | None:
        """One element for ``shape`` whose line is already indented."""
        if shape.anything:
            return self.generic(tag)
        return self.b.rule((shape, tag, depth), lambda: self.forms(shape, tag, depth))

    def forms(self, shape: Shape, tag: _Tag, depth: int) -> list[str | None]:
        if shape.choices is not None:
            return self.choices(shape, tag, depth)
        allowed = allowed_types(shape.guide)
        kinds = shape.kinds
        out: list[str | None] = []
        if "string" in kinds:
            out += self.strings(shape.string, allowed, tag)
        if kinds & {"integer", "number"}:
            out += self.numbers(shape.number, shape.integer, allowed, tag)
        if "boolean" in kinds:
            out += [seq(tag.head, lit(f"{attr}>{v}"), tag.end()) for v in ("true", "false")
                    for attr in ("", ' type="bool"') if attr or "boolean" in allowed]
        if "null" in kinds:
            out += [seq(tag.head, lit(' type="null"/>')), seq(tag.head, lit(' type="null">'), tag.end())]
            if "string" not in allowed:
                out += [seq(tag.head, lit("/>")), seq(tag.head, lit(">"), tag.end()),
                        seq(tag.head, lit(">null"), tag.end())]
        if "object" in kinds:
            out += self.container(shape, tag, depth, "dict", allowed)
        if "array" in kinds:
            out += self.container(shape, tag, depth, "list", allowed)
        return out

    def choices(self, shape: Shape, tag: _Tag, depth: int) -> list[str | None]:
        out: list[str | None] = []
        for value in shape.choices or ():
            if isinstance(value, (dict, list)) and value:
                out.append(self.element(const_shape(value, shape.guide), tag, depth))
            else:
                out += [tag.closed(rest) for rest in _spellings(value, shape.guide, tag)]
        return out

    def strings(self, rule: StringRule, allowed: frozenset[str], tag: _Tag) -> list[str | None]:
        out: list[str | None] = []
        for attr in ("", ' type="str"'):
            if not attr and "string" not in allowed:
                continue
            text = self.b.terminal(text_terminal(rule, allowed, typed=bool(attr)))
            out.append(seq(tag.head, lit(attr + ">"), text, tag.end()))
            if rule.empty_ok:
                out += [seq(tag.head, lit(attr + "/>")), seq(tag.head, lit(attr + ">"), tag.end())]
        return out

    def numbers(self, rule: NumberRule, integer: bool, allowed: frozenset[str], tag: _Tag) -> list[str | None]:
        body = number_terminal(rule, integer)
        text = self.b.terminal(body)
        out = [seq(tag.head, lit(' type="int">' if integer else ' type="float">'), text, tag.end())]
        if not integer:
            out.append(seq(tag.head, lit(' type="int">'), self.b.terminal(intersect(body, [INTEGER])), tag.end()))
        if "number" in allowed:
            out.append(seq(tag.head, lit(">"), text, tag.end()))
        return out

    def container(self, shape: Shape, tag: _Tag, depth: int, kind: str, allowed: frozenset[str]) -> list[str | None]:
        """Non-empty and empty forms of an object (``dict``) or array (``list``)."""
        inner = self.members(shape, depth + 1) if kind == "dict" else self.items(shape, depth + 1)
        containers = allowed & {"object", "array"}
        json_kind = "object" if kind == "dict" else "array"
        bare_ok = containers == {json_kind} or (kind == "list" and "array" in allowed)
        out: list[str | None] = []
        for attr in ("", f' type="{kind}"'):
            if attr or bare_ok:
                out.append(seq(tag.head, lit(attr + ">"), inner, _indent(depth), tag.end()))
        empty_ok = (shape.obj.min_props == 0 and not any(m.required for m in shape.obj.members)
                    if kind == "dict" else shape.array.min_items == 0)
        if empty_ok:
            out.append(seq(tag.head, lit(f' type="{kind}"/>')))
            earlier = {"string", "null"} | ({"array"} if kind == "dict" else set())
            if json_kind in allowed and not allowed & earlier:
                out.append(seq(tag.head, lit("/>")))
        return out

    def members(self, shape: Shape, depth: int) -> str | None:
        rule = shape.obj
        declared = [literal_regex(m.name) for m in rule.members]

        def member(i: int, first: bool) -> str | None:
            m = rule.members[i]
            return seq(_indent(depth), self.element(m.shape, _Tag.fixed(*_member_tag(m.name)), depth))

        def extras() -> list[str | None]:
            alts = []
            for cls in rule.extras:
                key = self.b.terminal(attribute_terminal(cls.pattern, (*cls.excluded, *declared)))
                alts.append(seq(_indent(depth), self.element(cls.shape, _Tag.entry(key), depth)))
            return alts

        def extra(first: bool) -> str | None:
            return self.b.rule((shape, depth, "extra"), extras)

        return object_body(self.b, (shape, depth, "members"), rule, member, extra, need_one=True)

    def items(self, shape: Shape, depth: int) -> str | None:
        def element(item: Shape, first: bool) -> str | None:
            return seq(_indent(depth), self.element(item, _ITEM, depth))

        return array_body(self.b, (shape, depth, "items"), shape.array, element)

    def generic(self, tag: _Tag) -> str:
        """Any value, typed or untyped, children on lines of any indentation
        (or on the parent's line)."""
        name = self.b.rule((tag, "generic"), lambda: self.generic_forms(tag))
        assert name is not None
        return name

    def generic_forms(self, tag: _Tag) -> list[str | None]:
        gap = self.b.terminal(rx(r"\n *"))
        text = self.b.terminal(text_terminal(StringRule()))
        number = self.b.terminal(number_terminal(NumberRule(), False))
        integer = self.b.terminal(number_terminal(NumberRule(), True))
        out: list[str | None] = [
            seq(tag.head, lit(">"), text, tag.end()), seq(tag.head, lit(' type="str">'), text, tag.end()),
            seq(tag.head, lit(' type="float">'), number, tag.end()),
            seq(tag.head, lit(' type="int">'), integer, tag.end()),
            *(seq(tag.head, lit(f' type="bool">{v}'), tag.end()) for v in ("true", "false")),
            seq(tag.head, lit(">"), tag.end()), seq(tag.head, lit(' type="str">'), tag.end()),
            *(seq(tag.head, lit(s)) for s in ("/>", ' type="str"/>', ' type="null"/>')),
            seq(tag.head, lit(' type="list"/>')), seq(tag.head, lit(' type="dict"/>')),
        ]
        key = self.b.terminal(attribute_terminal(None, ()))
        for kind, child in (("list", self.generic(_ITEM)), ("dict", self.generic(_Tag.entry(key)))):
            for attr in ("", f' type="{kind}"'):
                out.append(seq(tag.head, lit(attr + ">"), f"({gap}? {child})+", f"{gap}?", tag.end()))
        return out

    def document(self, shape: Shape) -> str:
        root = self.element(shape, _ROOT, 0)
        if root is None:
            raise UnsupportedSchemaError("grammar", "no XML document satisfies the schema's shape")
        return f'{lit(_DECLARATION)}? {root} "\\n"?'


def xml_grammar(schema: Schema | bool) -> str:
    """The llguidance Lark grammar of XML answers to ``schema`` (root
    ``<root>``); UnsupportedSchemaError when the schema admits no answer."""
    compiler = _XmlCompiler()
    start = compiler.document(read_shape(schema).shape)
    return compiler.b.text(start)
