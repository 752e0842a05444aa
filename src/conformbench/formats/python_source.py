"""Python literals for generated source."""

from __future__ import annotations

from typing import Any

from conformbench.jsontypes import JSONValue

__all__ = ["literal", "regex_literal", "annotation_extras", "FIELD_ANNOTATIONS"]

#: annotation keywords Field takes by name; other annotations go to json_schema_extra
FIELD_ANNOTATIONS = ("title", "description", "examples")
_EXTRA_ANNOTATIONS = ("default", "$comment", "deprecated", "readOnly", "writeOnly", "$schema", "$id")


def literal(value: JSONValue) -> str:
    """A Python expression equal to the JSON value (repr is exact for the
    JSON data model: str, int, float, bool, None, list, dict)."""
    return repr(value)


def regex_literal(pattern: str) -> str:
    """A raw string literal when the pattern allows one (easier to read)."""
    if pattern.isprintable() and not _odd_trailing_backslashes(pattern):
        for quote in ('"', "'"):
            if quote not in pattern:
                return f"r{quote}{pattern}{quote}"
    return repr(pattern)


def _odd_trailing_backslashes(text: str) -> bool:
    return (len(text) - len(text.rstrip("\\"))) % 2 == 1


def annotation_extras(schema: dict[str, Any]) -> str:
    """``Field`` keyword arguments carrying the schema's annotations ('' if none)."""
    args = [f"{key}={literal(schema[key])}" for key in FIELD_ANNOTATIONS if key in schema]
    extra = {key: schema[key] for key in _EXTRA_ANNOTATIONS if key in schema}
    if extra:
        args.append(f"json_schema_extra={literal(extra)}")
    return ", ".join(args)
