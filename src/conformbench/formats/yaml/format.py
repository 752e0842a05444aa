"""YAML: the schema as block YAML, and YAML answers read in the JSON data
model (rules in ``formats.yaml.safe``)."""

from __future__ import annotations

from typing import ClassVar

import yaml

from conformbench.formats.base import (
    ParsedOutput,
    UnrenderableSchemaError,
    UnrepresentableValueError,
    output_formats,
    schema_formats,
)
from conformbench.formats.limits import DEFAULT_LIMITS, Limits
from conformbench.formats.reading import SchemaReader, read_answer, read_schema
from conformbench.formats.source_map import SourceMap, yaml_source_map
from conformbench.formats.yaml.safe import YamlDataError, dump_json_yaml, load_json_yaml
from conformbench.jsontypes import JSONValue, Schema

__all__ = ["YamlOutput", "YamlSchemaFormat"]

_SCHEMA_READER = SchemaReader(load_json_yaml, YamlDataError, "a YAML schema", "a mapping or boolean")


@schema_formats.register("yaml")
class YamlSchemaFormat:
    """Block YAML of the schema, keys in source order; ``load`` reads it back
    to exactly the source schema (key order included)."""

    name: ClassVar[str]
    display_name: ClassVar[str] = "YAML"
    order: ClassVar[int] = 1

    def render(self, schema: Schema | bool) -> str:
        try:
            return dump_json_yaml(schema)
        except (YamlDataError, yaml.YAMLError) as exc:
            raise UnrenderableSchemaError("yaml", str(exc)) from None

    def source_map(self, schema: Schema | bool) -> SourceMap | None:
        return yaml_source_map(schema, self.render(schema), self.render)

    def load(self, text: str) -> Schema | bool:
        return read_schema(text, _SCHEMA_READER)


@output_formats.register("yaml")
class YamlOutput:
    """YAML answers: one document, JSON data model, YAML 1.2 core scalars."""

    name: ClassVar[str]
    display_name: ClassVar[str] = "YAML"
    order: ClassVar[int] = 1

    languages: ClassVar[tuple[str, ...]] = ("yaml", "yml")

    def __init__(self, limits: Limits = DEFAULT_LIMITS) -> None:
        self.limits = limits

    def parse(self, text: str, schema: Schema | None = None) -> ParsedOutput:
        return read_answer(text, self.languages, self.limits, lambda sample: load_json_yaml(sample, self.limits))

    def dump(self, value: JSONValue, schema: Schema | None = None) -> str:
        try:
            return dump_json_yaml(value)
        except (YamlDataError, yaml.YAMLError) as exc:
            raise UnrepresentableValueError(f"cannot write the value as YAML: {exc}") from None
