"""Python source pieces for generated Pydantic modules: literals, names,
and the imports a module uses."""

from __future__ import annotations

import ast
import builtins
import io
import json
import keyword
import re
import tokenize
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from conformbench.formats.base import UnrenderableSchemaError
from conformbench.jsontypes import JSONValue
from conformbench.validator.pattern_size import PatternTooLarge, check_size

__all__ = [
    "IMPORTABLE", "ROOT_FALLBACK", "Imports", "Names", "annotation_text", "camel", "literal", "needs_strict",
    "regex_literal", "root_class_name", "string_literal",
]

#: names a field must never take: what class bodies evaluate (annotations,
#: decorators) and what BaseModel defines
_BUILTINS = frozenset({"int", "float", "str", "bool", "list", "dict", "tuple", "classmethod", "Any"})


def string_literal(text: str) -> str:
    """A double-quoted Python string literal (as formatters write them);
    repr where JSON escaping would not read back exactly."""
    out = json.dumps(text, ensure_ascii=False)
    try:
        if ast.literal_eval(out) == text:
            return out
    except (ValueError, SyntaxError):  # pragma: no cover - lone surrogates and the like
        pass
    return repr(text)


def literal(value: JSONValue) -> str:
    """A Python expression equal to the JSON value."""
    if isinstance(value, str):
        return string_literal(value)
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{string_literal(k)}: {literal(v)}" for k, v in value.items()) + "}"
    return repr(value)


def regex_literal(pattern: str) -> str:
    """A raw string literal when the pattern allows one (easier to read).
    UnrenderableSchemaError when Python's ``re``, which the rendered model
    reads it with, cannot compile it (ECMA-262 spellings such as ``\\p{L}``)."""
    try:
        check_size(pattern)
        re.compile(pattern)
    except (re.error, PatternTooLarge) as exc:
        raise UnrenderableSchemaError(
            "python", f"pattern {pattern!r} is not a Python regular expression: {exc}") from None
    if pattern.isprintable() and not _odd_trailing_backslashes(pattern):
        for quote in ('"', "'"):
            if quote not in pattern:
                return f"r{quote}{pattern}{quote}"
    return string_literal(pattern)


def _odd_trailing_backslashes(text: str) -> bool:
    return (len(text) - len(text.rstrip("\\"))) % 2 == 1


def camel(hint: str) -> str:
    """A CamelCase class name from a property or definition name."""
    words = re.findall(r"[A-Za-z0-9]+", hint)
    base = "".join(w[:1].upper() + w[1:] for w in words) or "Model"
    return "Model" + base if base[0].isdigit() else base


#: every name a generated module may import, by module, in the order written
IMPORTABLE: dict[str, tuple[str, ...]] = {
    "datetime": ("date", "time"),
    "ipaddress": ("IPv4Address", "IPv6Address"),
    "typing": ("Annotated", "Any", "Literal"),
    "uuid": ("UUID",),
    "pydantic": (
        "AnyUrl", "AwareDatetime", "BaseModel", "ConfigDict", "EmailStr", "Field", "RootModel",
        "field_validator", "model_validator",
    ),
}
_IMPORTED = frozenset({"re"} | {n for names in IMPORTABLE.values() for n in names})
#: BaseModel attributes, and its metaclass's (``register``): pydantic warns when a field shadows one
_NOT_FIELDS = frozenset(dir(BaseModel)) | frozenset(dir(type(BaseModel))) | _BUILTINS | _IMPORTED


#: the root class's name when the schema has no usable ``title``
ROOT_FALLBACK = "Schema"
#: names a root class must not take: imports, BaseModel's attributes, builtins
#: (a class ``ValueError`` would shadow what validators raise)
_NOT_CLASSES = _NOT_FIELDS | frozenset(dir(builtins))


def root_class_name(schema: Any) -> str:
    """The root class's name: the schema's ``title`` in PascalCase (``"order
    line"`` -> ``OrderLine``), ``Schema`` when there is no title or nothing
    of it is an ASCII letter or digit (accents dropped). A name an import, a
    builtin, a keyword or a BaseModel attribute holds gets ``Model`` appended
    (``Field`` -> ``FieldModel``); a leading digit gets ``Schema`` prefixed.
    Nested classes never take the root's name (``Names.class_name``)."""
    title = schema.get("title") if isinstance(schema, dict) else None
    if not isinstance(title, str):
        return ROOT_FALLBACK
    # accents dropped, not the letters they sit on: "Résumé" -> "Resume"
    plain = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    words = re.findall(r"[A-Za-z0-9]+", plain)
    if not words:
        return ROOT_FALLBACK
    name = "".join(w[:1].upper() + w[1:] for w in words)
    if name[0].isdigit():
        name = ROOT_FALLBACK + name
    if name in _NOT_CLASSES or keyword.iskeyword(name):
        name += "Model"  # never one of them: only "Base" and "Root" would make one, and neither is
    return name


@dataclass
class Imports:
    """Writes the import lines a module body needs: the names it uses
    (Python tokens, so text inside strings never counts). ``use`` returns a
    name for call sites that want to say what they rely on."""

    def use(self, module: str, name: str = "") -> str:
        return name or module

    @staticmethod
    def lines(body: str) -> list[str]:
        """isort order: the standard library, a blank line, pydantic."""
        used = _names_in(body)
        std = ["import re"] if "re" in used else []
        third: list[str] = []
        for module, names in IMPORTABLE.items():
            wanted = sorted((n for n in names if n in used), key=lambda n: (not n[:1].isupper(), n))
            if wanted:
                (third if module == "pydantic" else std).append(f"from {module} import {', '.join(wanted)}")
        return std + ([""] if std and third else []) + third


def _names_in(body: str, wanted: frozenset[str] = _IMPORTED) -> set[str]:
    tokens = tokenize.generate_tokens(io.StringIO(body).readline)
    return {t.string for t in tokens if t.type == tokenize.NAME and t.string in wanted}


#: types whose lax validation coerces JSON values (``"1"`` to 1, 1 to True)
_COERCED = frozenset({"int", "float", "bool", "date", "time", "AwareDatetime", "IPv4Address", "IPv6Address"})


def needs_strict(annotations: str) -> bool:
    """Whether annotation source mentions a type that only ``strict=True``
    keeps from coercing (str, Literal, models, lists and dicts do not coerce JSON)."""
    return bool(_names_in(annotations + "\n", _COERCED))


@dataclass
class Names:
    """Identifiers handed out in one generated module. ``reserved`` holds the
    module-level names (classes, imports) that no field may shadow: in a
    class body a field with a default hides a name from later annotations.
    ``root`` is the root class's name, which no other class takes."""

    reserved: set[str] = field(default_factory=set)
    root: str = ROOT_FALLBACK
    classes: dict[str, str] = field(default_factory=dict)
    fields: set[str] = field(default_factory=set)

    def class_name(self, hint: str, key: str) -> str:
        """A fresh class name for ``hint``; the same name again for the same ``key``."""
        if key in self.classes:
            return self.classes[key]
        base = camel(hint)
        name, n = base, 2
        while name in self.classes.values() or name in _NOT_FIELDS or name == self.root:
            name, n = f"{base}{n}", n + 1
        self.classes[key] = name
        return name

    def field_name(self, key: str, taken: set[str]) -> str:
        """A Python identifier for property ``key`` (the caller adds
        ``alias=key`` when they differ); unique within ``taken``."""
        name = key
        if not (name.isidentifier() and name.isascii()) or self._clashes(name):
            name = re.sub(r"\W+", "_", key.encode("ascii", "replace").decode()).strip("_") or "field"
            if name[0].isdigit() or name.startswith(("model_", "check_")):
                name = "field_" + name
            if self._clashes(name):
                name += "_"
        base, n = name, 2
        while name in taken or self._clashes(name):
            name, n = f"{base}_{n}", n + 1
        taken.add(name)
        self.fields.add(name)
        return name

    def _clashes(self, name: str) -> bool:
        return (
            keyword.iskeyword(name) or name.startswith(("_", "model_", "check_"))
            or name in _NOT_FIELDS or name in self.reserved or name in self.classes.values()
            or name == self.root
        )


def annotation_text(schema: dict[str, Any]) -> str | None:
    """The schema's description (what a docstring or ``description=`` shows)."""
    text = schema.get("description")
    return text if isinstance(text, str) and text.strip() else None
