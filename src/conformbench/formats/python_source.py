"""Python literals for generated source."""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from conformbench.formats.python_helpers import GLOBAL_NAMES
from conformbench.jsontypes import JSONValue

__all__ = ["FIELD_ANNOTATIONS", "Names", "annotation_extras", "literal", "regex_literal"]

#: names a field must not take: BaseModel's attributes, the module's globals,
#: and the generated validator method
_NOT_FIELDS = frozenset(dir(BaseModel)) | GLOBAL_NAMES | {"check_object"}

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


@dataclass
class Names:
    """Identifiers handed out in one generated module. Class names and field
    names never coincide: in a class body a field named like a class would
    hide that class from the annotations after it."""

    classes: set[str] = field(default_factory=set)
    fields: set[str] = field(default_factory=set)

    def class_name(self, hint: str) -> str:
        words = re.findall(r"[A-Za-z0-9]+", hint)
        base = "".join(w[:1].upper() + w[1:] for w in words) or "Model"
        if base[0].isdigit():
            base = "Model" + base
        name, n = base, 2
        while name in self.classes or name in self.fields or name in GLOBAL_NAMES:
            name, n = f"{base}{n}", n + 1
        self.classes.add(name)
        return name

    def _clashes(self, name: str) -> bool:
        return (
            keyword.iskeyword(name) or name.startswith(("_", "model_"))
            or name in _NOT_FIELDS or name in self.classes
        )

    def field_name(self, key: str, taken: set[str]) -> str:
        """A Python identifier for property ``key`` (the caller adds
        ``alias=key`` when they differ); unique within ``taken``."""
        name = key
        if not (name.isidentifier() and name.isascii()) or self._clashes(name):
            name = re.sub(r"\W+", "_", key.encode("ascii", "replace").decode()).strip("_") or "field"
            if name[0].isdigit() or keyword.iskeyword(name):
                name = "field_" + name
            if self._clashes(name):
                name += "_"
        base, n = name, 2
        while name in taken or name in self.classes:
            name, n = f"{base}_{n}", n + 1
        taken.add(name)
        self.fields.add(name)
        return name
