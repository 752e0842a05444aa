"""The read flows the data formats share: answers (json, yaml, xml output
formats) and schemas read back from a rendering (yaml, xml schema formats).

For answers, order matters with hostile input: the cheap size/encoding precheck runs before
anything looks at the text, the sample is taken from fences next (rules in
``fences``), and only then does the format's own decoder run. A decoded value
that has no UTF-8 form is refused too, so a format can never hand the
validator a string the report cannot write.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass

from conformbench.errors import SchemaError
from conformbench.formats.base import ParsedOutput
from conformbench.formats.fences import extract_sample
from conformbench.formats.limits import Limits, precheck_text, unencodable_text
from conformbench.jsontypes import JSONValue, Schema

__all__ = ["Decoder", "SchemaReader", "read_answer", "read_schema"]

#: reads a sample's text as data; a ValueError's message is the user-facing reason
Decoder = Callable[[str], JSONValue]


def read_answer(text: str, languages: Collection[str], limits: Limits, decode: Decoder) -> ParsedOutput:
    """``text`` read as one document of a format whose fence names are
    ``languages``; never raises for bad input (``ok`` False says why)."""
    reason = precheck_text(text, limits)
    if reason:
        return ParsedOutput(ok=False, error=reason)
    sample = extract_sample(text, languages)
    if not sample.text.strip():
        return ParsedOutput(ok=False, source=sample.source, error="empty code block")
    try:
        value = decode(sample.text)
    except ValueError as exc:
        return ParsedOutput(ok=False, source=sample.source, error=str(exc))
    problem = unencodable_text(value)
    if problem:
        return ParsedOutput(ok=False, source=sample.source, error=problem)
    return ParsedOutput(ok=True, value=value, source=sample.source)


@dataclass(frozen=True)
class SchemaReader:
    """How one data format reads a schema back: ``decode`` raising ``error``
    for text that is no document of the format; ``document`` ("a YAML
    schema") and ``roots`` ("a mapping or boolean") word the SchemaError."""

    decode: Decoder
    error: type[ValueError]
    document: str
    roots: str


def read_schema(text: str, reader: SchemaReader) -> Schema | bool:
    """A schema decoded from ``text``, or SchemaError in one line."""
    try:
        value = reader.decode(text)
    except reader.error as exc:
        raise SchemaError(f"not {reader.document}: {exc}") from None
    if not isinstance(value, (dict, bool)):
        raise SchemaError(f"a schema must be {reader.roots}, not {type(value).__name__}")
    return value
