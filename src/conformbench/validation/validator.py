"""Ground-truth validation with python-jsonschema: draft taken from
``$schema`` (drafts 4 to 2020-12, default 2020-12), format checking on, one
compiled validator per schema, reused."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import jsonschema
from jsonschema import exceptions as js_exceptions
from jsonschema.protocols import Validator as _JSValidator
from jsonschema.validators import Draft202012Validator, validator_for as _js_validator_for

from conformbench.errors import SchemaError
from conformbench.jsontypes import JSONValue, Schema

__all__ = ["Violation", "SchemaValidator", "validator_for", "check_schema", "json_pointer"]


def json_pointer(parts: Any) -> str:
    """RFC 6901 pointer of a path deque/list ('' for the root)."""
    out = []
    for part in parts:
        out.append(str(part).replace("~", "~0").replace("/", "~1"))
    return "".join("/" + p for p in out)


@dataclass(frozen=True)
class Violation:
    keyword: str
    instance_path: str
    schema_path: str
    message: str
    #: the root value has the wrong data type (the paper's RTV)
    root_type: bool = False


def check_schema(schema: Schema) -> type[_JSValidator]:
    """The validator class for the schema's draft; SchemaError if invalid."""
    if not isinstance(schema, (dict, bool)):
        raise SchemaError(f"a schema must be a JSON object or boolean, not {type(schema).__name__}")
    cls: type[_JSValidator] = _js_validator_for(schema, default=Draft202012Validator)
    try:
        cls.check_schema(schema)
    except js_exceptions.SchemaError as exc:
        where = json_pointer(exc.path) or "/"
        raise SchemaError(f"invalid schema at {where}: {exc.message}") from None
    return cls


class SchemaValidator:
    """A compiled validator for one schema."""

    def __init__(self, schema: Schema) -> None:
        cls = check_schema(schema)
        self.schema = schema
        format_checker = getattr(cls, "FORMAT_CHECKER", jsonschema.FormatChecker())
        self._validator = cls(schema, format_checker=format_checker)

    def is_valid(self, instance: JSONValue) -> bool:
        try:
            return bool(self._validator.is_valid(instance))
        except RecursionError:
            return False

    def violations(self, instance: JSONValue) -> list[Violation]:
        try:
            errors = list(self._validator.iter_errors(instance))
        except RecursionError:
            return [Violation("depth", "", "", "instance nested too deeply to validate")]
        out: list[Violation] = []
        for err in sorted(errors, key=lambda e: (list(map(str, e.absolute_path)), str(e.validator))):
            keyword = str(err.validator)
            ipath = json_pointer(err.absolute_path)
            spath = json_pointer(err.absolute_schema_path)
            root = keyword == "type" and ipath == ""
            out.append(Violation(keyword, ipath, spath, err.message[:500], root))
        return out


@lru_cache(maxsize=4096)
def _cached(canonical: str) -> SchemaValidator:
    return SchemaValidator(json.loads(canonical))


def validator_for(schema: Schema) -> SchemaValidator:
    """A cached SchemaValidator (keyed by the schema's exact JSON text, key
    order included, so equal schemas share one compiled validator)."""
    return _cached(json.dumps(schema, ensure_ascii=False))
