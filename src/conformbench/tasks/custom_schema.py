"""The contract of task ``custom`` from a user's schema file
(``--schema FILE``): the file read as data in its format (JSON, YAML or XML
by its name; never executed), and the answer field named (``--answer-field``)
or inferred. The schema itself goes into the run spec's task params, so a
replay rescores without the file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conformbench.errors import SchemaError, UsageError
from conformbench.files import MAX_SCHEMA_BYTES, read_text_file
from conformbench.formats.base import format_named_by, schema_formats
from conformbench.jsontypes import Schema

__all__ = ["ANSWER_TYPES", "answer_field_of", "read_schema_file", "schema_format_of"]

#: the property types an answer field may have (matchers compare text; a number is read as its JSON text)
ANSWER_TYPES = ("string", "number", "integer")
_READABLE = ("json", "yaml", "xml")


def schema_format_of(path: Path) -> str:
    """The schema format a file's name says (json when it says none)."""
    return format_named_by(path.name) or "json"


def read_schema_file(path: Path, fmt: str | None = None) -> Schema:
    """``path`` read as a schema in ``fmt`` (default: as its name says), or
    UsageError in one line. A Pydantic (python) file is refused unread:
    conformbench never executes user Python; English cannot be read back."""
    fmt = fmt or schema_format_of(path)
    if fmt == "python":
        raise UsageError(f"--schema {path}: a Pydantic file is Python, and conformbench never executes "
                         "user Python; give its JSON Schema instead (Model.model_json_schema() written as "
                         "JSON), or the schema as YAML or XML")
    if fmt not in _READABLE:
        raise UsageError(f"--schema {path}: a {fmt} schema cannot be read back; give it as JSON, YAML or XML")
    text = read_text_file(path, "schema", MAX_SCHEMA_BYTES)
    try:
        loaded = schema_formats.get(fmt)().load(text)  # type: ignore[attr-defined]
    except (SchemaError, ValueError, RecursionError) as exc:
        raise UsageError(f"--schema {path}: not a {fmt} schema: {' '.join(str(exc).split())[:200]}") from None
    if not isinstance(loaded, dict):
        raise UsageError(f"--schema {path}: the contract must be an object schema, not {json.dumps(loaded)}")
    return loaded


def _type_of(prop: Any) -> str | None:
    if not isinstance(prop, dict):
        return None
    kind = prop.get("type")
    if isinstance(kind, str):
        return kind
    if "enum" in prop and all(isinstance(v, str) for v in prop["enum"]):
        return "string"
    return None


def answer_field_of(schema: Schema, named: str | None) -> str:
    """The property of ``schema`` that holds the answer: ``named``, else
    one called ``answer``, else the single required string or number
    property; UsageError naming the candidates otherwise."""
    props = schema.get("properties")
    if schema.get("type") != "object" or not isinstance(props, dict) or not props:
        raise UsageError("task custom: the schema must be an object schema with properties "
                         '(e.g. {"type": "object", "properties": {"answer": {"type": "string"}}})')
    if named is not None:
        if named not in props:
            raise UsageError(f"task custom: --answer-field {named!r} is not a property of the schema; "
                             f"its properties: {', '.join(props)}")
        return named
    if "answer" in props:
        return "answer"
    listed_required = schema.get("required")
    required: list[Any] = listed_required if isinstance(listed_required, list) else []
    candidates = [k for k in props if k in required and _type_of(props[k]) in ANSWER_TYPES]
    if len(candidates) == 1:
        return str(candidates[0])
    listed = ", ".join(candidates or list(props))
    raise UsageError(f"task custom: which property is the answer? name it with --answer-field "
                     f"(candidates: {listed})")
