"""Interfaces of schema formats (how a schema is shown to a model) and output
formats (how a model's answer text becomes data)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar, Literal, Protocol

from conformbench.errors import ConformbenchError, UnsupportedSchemaError
from conformbench.jsontypes import JSONValue, Schema
from conformbench.registry import Registry

__all__ = [
    "PAPER_OUTPUT_FORMATS",
    "PAPER_SCHEMA_FORMATS",
    "OutputFormat",
    "ParsedOutput",
    "SchemaFormat",
    "UnrenderableSchemaError",
    "UnrepresentableValueError",
    "format_display_name",
    "format_named_by",
    "output_formats",
    "schema_formats",
    "sorted_format_names",
]


#: the ConCodeEval grid: every schema rendered in these five formats, answers
#: asked for in these three (the built-in plugins of the two registries)
PAPER_SCHEMA_FORMATS = ("json", "yaml", "xml", "python", "nl")
PAPER_OUTPUT_FORMATS = ("json", "yaml", "xml")
#: a file name's ending -> the format it names (schema files and answer files alike)
_FILE_SUFFIXES = {".json": "json", ".yaml": "yaml", ".yml": "yaml", ".xml": "xml", ".py": "python",
                  ".txt": "nl", ".md": "nl"}


def format_named_by(file_name: str) -> str | None:
    """The format a file's name says (``.yml``: yaml), or None where it says none."""
    dot = file_name.rfind(".")
    return _FILE_SUFFIXES.get(file_name[dot:].lower()) if dot > 0 else None


class SchemaFormat(Protocol):
    """Renders a JSON Schema as text in one representation (json, yaml, xml,
    python, nl). Renderings are lossless: ``load`` (where the format is a data
    format) returns exactly the source schema.

    ``name`` is set by the registry; ``display_name`` is how prompts and
    reports name the format ("JSON", "natural language"); ``order`` places
    it in tables (lower first)."""

    name: ClassVar[str]
    display_name: ClassVar[str]
    order: ClassVar[int]

    def render(self, schema: Schema | bool) -> str: ...


@dataclass(frozen=True)
class ParsedOutput:
    """The result of reading a model's answer in one output format.

    ``ok`` is False for anything that is not a well-formed document of the
    requested format (including hostile input); ``error`` then says why.
    ``source`` says whether the sample came from a fenced code block or the
    raw text.
    """

    ok: bool
    value: JSONValue = None
    source: Literal["fenced", "raw"] | None = None
    error: str | None = None


class OutputFormat(Protocol):
    """Reads answer text strictly in one format (json, yaml, xml) and writes
    data back in that format (for few-shot examples and validation items).

    ``languages`` are the fence info strings that mark a sample in this
    format (```yaml, ```yml); ``display_name`` and ``order`` as for schema
    formats."""

    name: ClassVar[str]
    display_name: ClassVar[str]
    order: ClassVar[int]
    languages: ClassVar[tuple[str, ...]]

    def parse(self, text: str, schema: Schema | None = None) -> ParsedOutput: ...

    def dump(self, value: JSONValue, schema: Schema | None = None) -> str: ...


schema_formats: Registry[type[SchemaFormat]] = Registry("schema format", {
    "json": "conformbench.formats.json.format",
    "yaml": "conformbench.formats.yaml.format",
    "xml": "conformbench.formats.xml.format",
    "python": "conformbench.formats.python.format",
    "nl": "conformbench.formats.nl.format",
}, also_called={"pydantic": "python", "py": "python", "english": "nl", "text": "nl", "natural": "nl",
                "yml": "yaml", "jsonschema": "json", "json-schema": "json"})
output_formats: Registry[type[OutputFormat]] = Registry("output format", {
    "json": "conformbench.formats.json.format",
    "yaml": "conformbench.formats.yaml.format",
    "xml": "conformbench.formats.xml.format",
}, also_called={"yml": "yaml"})


class UnrenderableSchemaError(UnsupportedSchemaError):
    """A schema format cannot express this schema (a keyword the Pydantic
    renderer has no equivalent for, a character XML 1.0 cannot carry). Like
    an engine's UnsupportedSchemaError, the runner records the item as
    excluded with this message."""

    def __init__(self, format_name: str, reason: str) -> None:
        super().__init__(format_name, reason)
        self.args = (f"the {format_name} schema format cannot express this schema: {reason}",)


class UnrepresentableValueError(ConformbenchError):
    """An output format cannot write this value faithfully (``dump``)."""


def _format_class(name: str) -> type[SchemaFormat] | type[OutputFormat]:
    """The plugin of ``name``: a schema format, else an output format (a name
    that is both, like json, has one display name and order)."""
    if name in schema_formats:
        return schema_formats.get(name)
    return output_formats.get(name)  # UnknownNameError with a did-you-mean


def format_display_name(name: str) -> str:
    """'JSON', 'natural language'... of a schema or output format name."""
    return _format_class(name).display_name


def sorted_format_names(names: Iterable[str]) -> list[str]:
    """Format names in table order: by each plugin's ``order``, then by name;
    names no registry knows go last."""

    def rank(name: str) -> tuple[int, str]:
        known = name in schema_formats or name in output_formats
        return (_format_class(name).order if known else 1 << 30, name)

    return sorted(set(names), key=rank)
