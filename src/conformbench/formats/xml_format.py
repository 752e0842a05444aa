"""XML: the schema in the typed-attribute form (root ``<schema>``), and XML
answers (root element ``<root>`` by convention; its name is not checked)
read typed or schema-guided (rules in ``xml_codec``)."""

from __future__ import annotations

from conformbench.errors import SchemaError
from conformbench.formats.base import (
    ParsedOutput,
    UnrenderableSchemaError,
    UnrepresentableValueError,
    output_formats,
    schema_formats,
)
from conformbench.formats.fences import extract_sample
from conformbench.formats.limits import DEFAULT_LIMITS, Limits, precheck_text, unencodable_text
from conformbench.formats.xml_codec import XmlDataError, decode, encode, read_xml
from conformbench.jsontypes import JSONValue, Schema

__all__ = ["XmlSchemaFormat", "XmlOutput"]

_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>'


@schema_formats.register("xml")
class XmlSchemaFormat:
    """Every element typed (``type="dict|list|str|int|float|bool|null"``),
    so ``load`` returns exactly the source schema."""

    name = "xml"

    def render(self, schema: Schema | bool) -> str:
        try:
            lines = encode(schema, None, ("schema", None))
        except XmlDataError as exc:
            raise UnrenderableSchemaError("xml", str(exc)) from None
        return "\n".join([_DECLARATION, *lines])

    def load(self, text: str) -> Schema | bool:
        try:
            value = decode(read_xml(text), ())
        except XmlDataError as exc:
            raise SchemaError(f"not an XML schema: {exc}") from None
        if not isinstance(value, (dict, bool)):
            raise SchemaError(f"a schema must be a dict or bool, not {type(value).__name__}")
        return value


@output_formats.register("xml")
class XmlOutput:
    """XML answers. With a schema, elements may leave out ``type`` where the
    schema fixes what they hold; ``dump`` with a schema writes that form,
    ``dump`` without one writes the fully typed form."""

    name = "xml"
    languages = ("xml",)

    def __init__(self, limits: Limits = DEFAULT_LIMITS) -> None:
        self.limits = limits

    def parse(self, text: str, schema: Schema | None = None) -> ParsedOutput:
        reason = precheck_text(text, self.limits)
        if reason:
            return ParsedOutput(ok=False, error=reason)
        sample = extract_sample(text, self.languages)
        if not sample.text.strip():
            return ParsedOutput(ok=False, source=sample.source, error="empty code block")
        guide = () if schema is None else (schema,)
        try:
            value = decode(read_xml(sample.text.strip(), self.limits), guide)
        except XmlDataError as exc:
            return ParsedOutput(ok=False, source=sample.source, error=str(exc))
        except ValueError as exc:  # e.g. integers over Python's digit limit
            return ParsedOutput(ok=False, source=sample.source, error=f"not valid XML data: {exc}")
        problem = unencodable_text(value)
        if problem:
            return ParsedOutput(ok=False, source=sample.source, error=problem)
        return ParsedOutput(ok=True, value=value, source=sample.source)

    def dump(self, value: JSONValue, schema: Schema | None = None) -> str:
        guide = None if schema is None else (schema,)
        try:
            return "\n".join(encode(value, guide))
        except XmlDataError as exc:
            raise UnrepresentableValueError(f"cannot write the value as XML: {exc}") from None
