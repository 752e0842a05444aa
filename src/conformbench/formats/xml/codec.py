"""JSON data <-> XML elements, in the typed-attribute form and the
schema-guided form (the mapping table is in docs/formats.md).

Typed form (as in the ConCodeEval paper's Listing 10): every element has
``type="dict|list|str|int|float|bool|null"``; object members are elements
named by their key, or ``<entry key="...">`` when the key is not a plain XML
name; array members are ``<item>`` elements.

Guided form: elements may omit ``type``; the JSON Schema then says what the
element holds (see ``formats.xml.guide``), and where it leaves several types open
the content decides (``_untyped_scalar`` / ``_untyped_container``). A
``type`` attribute always wins, so ``encode`` writes one exactly where the
guided reading would otherwise get the value wrong. Only keys the schema
names at that position are element names; undeclared keys (those of
``additionalProperties``, ``patternProperties``, open values) are written
``<entry key="...">``, as the XML answer grammar writes them. Reading takes
either spelling of any key.

Reading goes through defusedxml (no DTDs, entities or external references)
with a tree builder that stops at ``Limits.max_depth``.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from typing import Any

import defusedxml
from defusedxml.ElementTree import DefusedXMLParser

from conformbench.formats.limits import DEFAULT_LIMITS, Limits
from conformbench.formats.xml.guide import (
    Guide,
    allowed_types,
    item_guide,
    property_guide,
)
from conformbench.jsontypes import JSONValue

__all__ = ["XmlDataError", "decode", "encode", "read_xml"]

_KINDS = ("dict", "list", "str", "int", "float", "bool", "null")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9._-]*$")
_INT = re.compile(r"^-?[0-9]+$")
_NUMBER = re.compile(r"^-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$")
# characters XML 1.0 cannot carry, not even as character references
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


class XmlDataError(ValueError):
    """The text or value has no faithful reading in the XML mapping."""


class _DepthLimitedBuilder(ET.TreeBuilder):
    def __init__(self, max_depth: int) -> None:
        super().__init__()
        self._depth = 0
        self._max_depth = max_depth

    def start(self, tag: Any, attrs: Any) -> ET.Element:
        self._depth += 1
        if self._depth > self._max_depth:
            raise XmlDataError(f"nesting deeper than {self._max_depth}")
        return super().start(tag, attrs)

    def end(self, tag: Any) -> ET.Element:
        self._depth -= 1
        return super().end(tag)


def read_xml(text: str, limits: Limits = DEFAULT_LIMITS) -> ET.Element:
    """Parse one XML document safely; XmlDataError says why not."""
    parser = DefusedXMLParser(
        target=_DepthLimitedBuilder(limits.max_depth), forbid_dtd=True
    )
    try:
        parser.feed(text)
        root: ET.Element = parser.close()
    except XmlDataError:
        raise
    except defusedxml.DTDForbidden:
        raise XmlDataError("XML document type declarations (DTDs) are not allowed") from None
    except defusedxml.EntitiesForbidden:
        raise XmlDataError("XML entity declarations are not allowed") from None
    except defusedxml.ExternalReferenceForbidden:
        raise XmlDataError("external references are not allowed") from None
    except ET.ParseError as exc:
        raise XmlDataError(f"not valid XML: {exc}") from None
    return root


# ---------------------------------------------------------------- reading


def _where(elem: ET.Element) -> str:
    return f"<{elem.tag}>"


def _check_attrs(elem: ET.Element, in_object: bool) -> None:
    for name in elem.attrib:
        if name == "key" and in_object:
            continue
        if name != "type":
            raise XmlDataError(f"unexpected attribute {name!r} on {_where(elem)}")


def _member_key(child: ET.Element) -> str:
    if "key" in child.attrib:
        if child.tag != "entry":
            raise XmlDataError(f"a key attribute belongs on <entry>, not {_where(child)}")
        return child.attrib["key"]
    if child.tag.startswith("{"):
        raise XmlDataError(f"XML namespaces are not supported ({child.tag})")
    return str(child.tag)


def _no_text(elem: ET.Element) -> None:
    for piece in [elem.text] + [child.tail for child in elem]:
        if piece and piece.strip():
            raise XmlDataError(f"{_where(elem)} mixes text with child elements")


def _typed_scalar(elem: ET.Element, kind: str) -> JSONValue:
    if len(elem):
        raise XmlDataError(f"{_where(elem)} of type {kind} cannot have child elements")
    text = elem.text or ""
    stripped = text.strip()
    if kind == "str":
        return text
    if kind == "null":
        if stripped:
            raise XmlDataError(f"{_where(elem)} of type null must be empty")
        return None
    if kind == "bool" and stripped in ("true", "false"):
        return stripped == "true"
    if kind == "int" and _INT.match(stripped):
        return _number(stripped, elem)
    if kind == "float" and _NUMBER.match(stripped):
        return _number(stripped, elem, as_float=True)
    raise XmlDataError(f"{_where(elem)}: {stripped[:40]!r} is not a valid {kind}")


def _number(text: str, elem: ET.Element, as_float: bool = False) -> int | float:
    """The number ``text`` spells; an error where JSON's reading rejects it
    too (``1e999`` overflows to infinity, an integer past Python's digit limit)."""
    try:
        value: int | float = float(text) if as_float or not _INT.match(text) else int(text)
    except ValueError:
        raise XmlDataError(f"{_where(elem)}: an integer of {len(text)} digits is too long") from None
    if isinstance(value, float) and not math.isfinite(value):
        raise XmlDataError(f"{_where(elem)}: {text[:40]!r} overflows (not a finite JSON number)")
    return value


def _untyped_scalar(text: str, allowed: frozenset[str], elem: ET.Element) -> JSONValue:
    """The value of a childless element without ``type`` (see module doc)."""
    if text == "":
        for kind, empty in (("string", ""), ("null", None), ("array", []), ("object", {})):
            if kind in allowed:
                return empty
        return ""
    stripped = text.strip()
    if "number" in allowed and _NUMBER.match(stripped):
        return _number(stripped, elem)
    if "boolean" in allowed and stripped in ("true", "false"):
        return stripped == "true"
    if "null" in allowed and "string" not in allowed and stripped == "null":
        return None
    return text


def _looks_like_list(elem: ET.Element) -> bool:
    tags = {child.tag for child in elem}
    if any("key" in child.attrib for child in elem) or len(tags) != 1:
        return False
    return tags == {"item"} or len(elem) > 1


def _untyped_container(elem: ET.Element, allowed: frozenset[str]) -> str:
    containers = allowed & {"array", "object"}
    if len(containers) == 1:
        return "list" if containers == {"array"} else "dict"
    return "list" if _looks_like_list(elem) else "dict"


def decode(elem: ET.Element, guide: Guide, in_object: bool = False) -> JSONValue:
    """The JSON value of ``elem`` under the subschemas in ``guide``."""
    _check_attrs(elem, in_object)
    kind = elem.attrib.get("type")
    if kind is not None and kind not in _KINDS:
        raise XmlDataError(f"{_where(elem)} has unknown type {kind!r} (use one of {', '.join(_KINDS)})")
    if kind is None:
        if not len(elem):
            return _untyped_scalar(elem.text or "", allowed_types(guide), elem)
        kind = _untyped_container(elem, allowed_types(guide))
    if kind == "dict":
        _no_text(elem)
        out: dict[str, Any] = {}
        for child in elem:
            key = _member_key(child)
            if key in out:
                raise XmlDataError(f"duplicate key {key!r} in {_where(elem)}")
            out[key] = decode(child, property_guide(guide, key), in_object=True)
        return out
    if kind == "list":
        _no_text(elem)
        return [decode(child, item_guide(guide, i)) for i, child in enumerate(elem)]
    return _typed_scalar(elem, kind)


# ---------------------------------------------------------------- writing


def _kind(value: JSONValue) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        if not math.isfinite(value):
            raise XmlDataError(f"{value!r} is not a JSON number")
        return "float"
    if isinstance(value, str):
        return "str"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "dict"
    raise XmlDataError(f"{type(value).__name__} is not a JSON value")


def _scalar_text(value: JSONValue, kind: str) -> str:
    if kind == "bool":
        return "true" if value else "false"
    if kind == "null":
        return ""
    return value if isinstance(value, str) else repr(value)


def _escape(text: str, attribute: bool = False) -> str:
    bad = _NOT_XML.search(text)
    if bad:
        raise XmlDataError(f"XML 1.0 cannot represent the character U+{ord(bad.group()):04X}")
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = text.replace("\r", "&#13;")
    if attribute:
        text = text.replace('"', "&quot;").replace("\n", "&#10;").replace("\t", "&#9;")
    return text


def _same(decoded: JSONValue, value: JSONValue) -> bool:
    return type(decoded) is type(value) and decoded == value


#: how one member is written: element name, and the key attribute of <entry>
_Tag = tuple[str, str | None]


def _needs_type(value: JSONValue, kind: str, guide: Guide | None, tags: list[_Tag]) -> bool:
    """Whether the guided reading of this element would miss without ``type``."""
    if guide is None:
        return True
    allowed = allowed_types(guide)
    if kind in ("dict", "list") and value:
        probe = ET.Element("probe")
        for name, key in tags:
            ET.SubElement(probe, name, {} if key is None else {"key": key})
        return _untyped_container(probe, allowed) != kind
    text = "" if kind in ("dict", "list") else _scalar_text(value, kind)
    return not _same(_untyped_scalar(text, allowed, ET.Element("value")), value)


def _member_tag(key: str) -> _Tag:
    if _NAME.match(key) and key != "entry" and not key.lower().startswith("xml"):
        return (key, None)
    return ("entry", key)


def _declared(guide: Guide) -> frozenset[str]:
    """Keys the position's own schema (the guide's first) names in
    ``properties`` or ``required``: the keys the YAML/XML grammars write as
    element names (engines/grammars/xml_lark.py)."""
    own = guide[0] if guide else None
    if not isinstance(own, dict):
        return frozenset()
    props = own.get("properties")
    required = own.get("required")
    names = set(props) if isinstance(props, dict) else set()
    names |= {r for r in required if isinstance(r, str)} if isinstance(required, list) else set()
    return frozenset(names)


def _guided_tag(key: str, declared: frozenset[str]) -> _Tag:
    """A declared key as its element name where it is an XML name; any other
    key as ``<entry key="...">``: an element named by a key the schema does
    not state cannot be closed by a context-free grammar."""
    return _member_tag(key) if key in declared else ("entry", key)


def _members(value: JSONValue, guide: Guide | None) -> list[tuple[_Tag, JSONValue, Guide | None]]:
    if isinstance(value, dict):
        if guide is None:  # the typed form: every XML-name key as its element name
            return [(_member_tag(k), v, None) for k, v in value.items()]
        declared = _declared(guide)
        return [(_guided_tag(k, declared), v, property_guide(guide, k)) for k, v in value.items()]
    if isinstance(value, list):
        return [
            (("item", None), v, None if guide is None else item_guide(guide, i))
            for i, v in enumerate(value)
        ]
    return []


#: called with (value, first line, end line, tag, indent) for every value written
Recorder = Callable[[JSONValue, int, int, _Tag, int], None]


def encode(value: JSONValue, guide: Guide | None, tag: _Tag = ("root", None), indent: int = 0,
           record: Recorder | None = None) -> list[str]:
    """Lines of XML for ``value``: fully typed when ``guide`` is None,
    otherwise typed only where the guided reading needs it. ``record``
    learns which lines each value took (the schema format's source map)."""
    out: list[str] = []
    _encode(out, value, guide, tag, indent, record)
    return out


def _encode(out: list[str], value: JSONValue, guide: Guide | None, tag: _Tag, indent: int,
            record: Recorder | None) -> None:
    first = len(out)
    kind = _kind(value)
    pad = "  " * indent
    members = _members(value, guide)
    name, key = tag
    head = name if key is None else f'{name} key="{_escape(key, attribute=True)}"'
    if _needs_type(value, kind, guide, [m[0] for m in members]):
        head += f' type="{kind}"'
    if kind in ("dict", "list") and not members:
        out.append(f"{pad}<{head}/>")
    elif kind in ("dict", "list"):
        out.append(f"{pad}<{head}>")
        for member_tag, sub, sub_guide in members:
            _encode(out, sub, sub_guide, member_tag, indent + 1, record)
        out.append(f"{pad}</{name}>")
    else:
        text = _escape(_scalar_text(value, kind))
        out.append(f"{pad}<{head}/>" if text == "" else f"{pad}<{head}>{text}</{name}>")
    if record is not None:
        record(value, first, len(out), tag, indent)
