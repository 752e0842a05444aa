"""XML: the schema in the typed-attribute form (root ``<schema>``), and XML
answers (root element ``<root>`` by convention; its name is not checked)
read typed or schema-guided (rules in ``formats.xml.codec``)."""

from __future__ import annotations

from typing import ClassVar

from conformbench.formats.base import (
    ParsedOutput,
    UnrenderableSchemaError,
    UnrepresentableValueError,
    output_formats,
    schema_formats,
)
from conformbench.formats.limits import DEFAULT_LIMITS, Limits
from conformbench.formats.reading import SchemaReader, read_answer, read_schema
from conformbench.formats.source_map import Block, DocPath, SourceMap, blocks_by_identity
from conformbench.formats.xml.codec import XmlDataError, _Tag, decode, encode, read_xml
from conformbench.formats.xml.guide import Guide
from conformbench.jsontypes import JSONValue, Schema

__all__ = ["XmlOutput", "XmlSchemaFormat"]

_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>'
_SCHEMA_READER = SchemaReader(lambda text: decode(read_xml(text), ()), ValueError, "an XML schema", "a dict or bool")


def _read_data(sample: str, guide: Guide, limits: Limits) -> JSONValue:
    try:
        return decode(read_xml(sample.strip(), limits), guide)
    except XmlDataError:
        raise
    except ValueError as exc:  # e.g. integers over Python's digit limit
        raise XmlDataError(f"not valid XML data: {exc}") from None


@schema_formats.register("xml")
class XmlSchemaFormat:
    """Every element typed (``type="dict|list|str|int|float|bool|null"``),
    so ``load`` returns exactly the source schema."""

    name: ClassVar[str]
    display_name: ClassVar[str] = "XML"
    order: ClassVar[int] = 2

    def render(self, schema: Schema | bool) -> str:
        try:
            lines = encode(schema, None, ("schema", None))
        except XmlDataError as exc:
            raise UnrenderableSchemaError("xml", str(exc)) from None
        return "\n".join([_DECLARATION, *lines])

    def source_map(self, schema: Schema | bool) -> SourceMap:
        """Each object's elements, redrawn with ``encode`` at the same tag and
        indent (an element's lines depend on nothing else)."""
        spans: dict[int, tuple[int, int, _Tag, int]] = {}

        def record(value: JSONValue, first: int, end: int, tag: _Tag, indent: int) -> None:
            if isinstance(value, dict):
                spans[id(value)] = (first, end, tag, indent)

        try:
            lines = encode(schema, None, ("schema", None), record=record)
        except XmlDataError as exc:
            raise UnrenderableSchemaError("xml", str(exc)) from None
        text = "\n".join([_DECLARATION, *lines])
        offsets = [len(_DECLARATION) + 1]
        for line in lines:
            offsets.append(offsets[-1] + len(line) + 1)
        by_path = blocks_by_identity(schema, spans)

        def find(path: DocPath) -> Block | None:
            if not path:
                return Block(0, len(text), self.render, exact=True)
            if path not in by_path:
                return None
            first, end, tag, indent = by_path[path]

            def redraw(value: JSONValue) -> str:
                return "\n".join(encode(value, None, tag, indent))

            return Block(offsets[first], offsets[end] - 1, redraw)

        return SourceMap(text, find)

    def load(self, text: str) -> Schema | bool:
        return read_schema(text, _SCHEMA_READER)


@output_formats.register("xml")
class XmlOutput:
    """XML answers. With a schema, elements may leave out ``type`` where the
    schema fixes what they hold; ``dump`` with a schema writes that form,
    ``dump`` without one writes the fully typed form."""

    name: ClassVar[str]
    display_name: ClassVar[str] = "XML"
    order: ClassVar[int] = 2

    languages: ClassVar[tuple[str, ...]] = ("xml",)

    def __init__(self, limits: Limits = DEFAULT_LIMITS) -> None:
        self.limits = limits

    def parse(self, text: str, schema: Schema | None = None) -> ParsedOutput:
        guide = () if schema is None else (schema,)
        return read_answer(text, self.languages, self.limits, lambda sample: _read_data(sample, guide, self.limits))

    def dump(self, value: JSONValue, schema: Schema | None = None) -> str:
        guide = None if schema is None else (schema,)
        try:
            return "\n".join(encode(value, guide))
        except XmlDataError as exc:
            raise UnrepresentableValueError(f"cannot write the value as XML: {exc}") from None
