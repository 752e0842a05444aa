"""YAML: the schema as block YAML, and YAML answers read in the JSON data
model (rules in ``yaml_safe``)."""

from __future__ import annotations

import yaml

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
from conformbench.formats.yaml_safe import YamlDataError, dump_json_yaml, load_json_yaml
from conformbench.jsontypes import JSONValue, Schema

__all__ = ["YamlSchemaFormat", "YamlOutput"]


@schema_formats.register("yaml")
class YamlSchemaFormat:
    """Block YAML of the schema, keys in source order; ``load`` reads it back
    to exactly the source schema (key order included)."""

    name = "yaml"

    def render(self, schema: Schema | bool) -> str:
        try:
            return dump_json_yaml(schema)
        except (YamlDataError, yaml.YAMLError) as exc:
            raise UnrenderableSchemaError("yaml", str(exc)) from None

    def load(self, text: str) -> Schema | bool:
        try:
            value = load_json_yaml(text)
        except YamlDataError as exc:
            raise SchemaError(f"not a YAML schema: {exc}") from None
        if not isinstance(value, (dict, bool)):
            raise SchemaError(f"a schema must be a mapping or boolean, not {type(value).__name__}")
        return value


@output_formats.register("yaml")
class YamlOutput:
    """YAML answers: one document, JSON data model, YAML 1.2 core scalars."""

    name = "yaml"
    languages = ("yaml", "yml")

    def __init__(self, limits: Limits = DEFAULT_LIMITS) -> None:
        self.limits = limits

    def parse(self, text: str, schema: Schema | None = None) -> ParsedOutput:
        reason = precheck_text(text, self.limits)
        if reason:
            return ParsedOutput(ok=False, error=reason)
        sample = extract_sample(text, self.languages)
        if not sample.text.strip():
            return ParsedOutput(ok=False, source=sample.source, error="empty code block")
        try:
            value = load_json_yaml(sample.text, self.limits)
        except YamlDataError as exc:
            return ParsedOutput(ok=False, source=sample.source, error=str(exc))
        problem = unencodable_text(value)
        if problem:
            return ParsedOutput(ok=False, source=sample.source, error=problem)
        return ParsedOutput(ok=True, value=value, source=sample.source)

    def dump(self, value: JSONValue, schema: Schema | None = None) -> str:
        try:
            return dump_json_yaml(value)
        except (YamlDataError, yaml.YAMLError) as exc:
            raise UnrepresentableValueError(f"cannot write the value as YAML: {exc}") from None
