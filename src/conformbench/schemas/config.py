"""Combinatorial preferences of the schema generator.

A small validated model: every mapping is keyed by a closed set of names, so a
misspelt keyword or type in a config file is rejected instead of silently
ignored. Files (TOML or JSON) override the defaults field by field, and the
weight/probability tables entry by entry.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from conformbench.errors import UsageError
from conformbench.files import MAX_SCHEMA_BYTES, read_bytes_file
from conformbench.jsontypes import number_error

__all__ = [
    "FORMATS",
    "KEYWORDS",
    "SCHEMA_KINDS",
    "GeneratorConfig",
    "Keyword",
    "SchemaKind",
    "load_config",
]

#: What a generated (sub)schema is: a JSON type, a typeless enum/const, or {}.
SchemaKind = Literal[
    "object", "array", "string", "number", "integer", "boolean", "null", "enum", "const", "any"
]
SCHEMA_KINDS: tuple[SchemaKind, ...] = get_args(SchemaKind)

#: Optional keywords the generator may add (type, enum and const come from the kind).
Keyword = Literal[
    "multipleOf", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "minLength", "maxLength", "pattern", "format",
    "items", "prefixItems", "contains", "minContains", "maxContains",
    "minItems", "maxItems", "uniqueItems",
    "properties", "required", "additionalProperties", "patternProperties",
    "minProperties", "maxProperties", "dependentRequired",
]
KEYWORDS: tuple[Keyword, ...] = get_args(Keyword)
FormatName = Literal["date", "date-time", "email", "idn-email", "uri", "uuid", "ipv4"]
FORMATS: tuple[FormatName, ...] = get_args(FormatName)

Weight = Annotated[float, Field(ge=0.0)]
Probability = Annotated[float, Field(ge=0.0, le=1.0)]
Count = Annotated[int, Field(ge=0, le=64)]

_ROOT_WEIGHTS: dict[SchemaKind, float] = {
    "object": 52, "array": 20, "string": 7, "number": 5, "integer": 5,
    "boolean": 1.5, "null": 1, "enum": 4, "const": 2, "any": 0.5,
}
_VALUE_WEIGHTS: dict[SchemaKind, float] = {
    "object": 9, "array": 9, "string": 20, "number": 14, "integer": 14,
    "boolean": 8, "null": 4, "enum": 6, "const": 3, "any": 3,
}
_KEYWORD_PROBABILITIES: dict[Keyword, float] = {
    "multipleOf": 0.3, "minimum": 0.3, "maximum": 0.3,
    "exclusiveMinimum": 0.25, "exclusiveMaximum": 0.25,
    "minLength": 0.3, "maxLength": 0.35, "pattern": 0.25, "format": 0.25,
    "items": 0.75, "prefixItems": 0.2, "contains": 0.3, "minContains": 0.45,
    "maxContains": 0.45, "minItems": 0.35, "maxItems": 0.35, "uniqueItems": 0.3,
    "properties": 0.95, "required": 0.7, "additionalProperties": 0.5,
    "patternProperties": 0.15, "minProperties": 0.2, "maxProperties": 0.2,
    "dependentRequired": 0.15,
}


class GeneratorConfig(BaseModel):
    """How schemas are drawn. Weights are relative; probabilities are per
    place where a keyword applies (a ``pattern`` is only ever drawn for a
    string schema)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    root_kinds: dict[SchemaKind, Weight] = Field(default_factory=lambda: dict(_ROOT_WEIGHTS))
    value_kinds: dict[SchemaKind, Weight] = Field(default_factory=lambda: dict(_VALUE_WEIGHTS))
    keywords: dict[Keyword, Probability] = Field(
        default_factory=lambda: dict(_KEYWORD_PROBABILITIES)
    )
    formats: dict[FormatName, Weight] = Field(default_factory=lambda: {f: 1.0 for f in FORMATS})
    #: deepest nesting of schemas (the root is depth 1)
    max_depth: Annotated[int, Field(ge=1, le=8)] = 4
    #: property counts of the root object and of nested objects
    root_properties: tuple[Count, Count] = (2, 9)
    nested_properties: tuple[Count, Count] = (1, 4)
    prefix_items: tuple[Count, Count] = (1, 3)
    enum_size: tuple[Count, Count] = (2, 5)
    #: add "$schema": draft 2020-12 to every root (off: the paper's schemas omit it)
    schema_uri: bool = False

    @model_validator(mode="after")
    def _check(self) -> GeneratorConfig:
        for name in ("root_properties", "nested_properties", "prefix_items", "enum_size"):
            low, high = getattr(self, name)
            if low > high:
                raise ValueError(f"{name}: minimum {low} is above maximum {high}")
        if self.enum_size[0] < 1:
            raise ValueError("enum_size: an enum needs at least one value")
        for name in ("root_kinds", "value_kinds", "formats"):
            if not any(w > 0 for w in getattr(self, name).values()):
                raise ValueError(f"{name}: at least one weight must be positive")
        return self


_MERGED_TABLES = ("root_kinds", "value_kinds", "keywords", "formats")


def load_config(path: Path | None) -> GeneratorConfig:
    """The defaults, overridden by a TOML or JSON file; UsageError (one line)
    on unreadable files, unknown keys and out-of-range values."""
    if path is None:
        return GeneratorConfig()
    data = _read_mapping(path)
    base = GeneratorConfig().model_dump()
    for key, value in data.items():
        if key in _MERGED_TABLES and isinstance(value, dict):
            base[key] = {**base[key], **value}
        else:
            base[key] = value
    try:
        return GeneratorConfig.model_validate(base)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "config"
        raise UsageError(f"{path}: {where}: {first['msg']}") from None


def _read_mapping(path: Path) -> dict[str, Any]:
    raw = read_bytes_file(path, "config file", MAX_SCHEMA_BYTES)
    try:
        if path.suffix.lower() == ".toml":
            data: Any = tomllib.loads(raw.decode("utf-8"))
        else:
            data = json.loads(raw)
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"{path} is not a valid config file: {exc}") from None
    except RecursionError:
        raise UsageError(f"{path} is nested too deeply to read as a config file") from None
    except ValueError as exc:  # an integer past Python's int-string limit
        raise UsageError(f"{path}: {number_error(exc)}") from None
    if not isinstance(data, dict):
        raise UsageError(f"{path}: a config file must hold a table/object at the top")
    return data
