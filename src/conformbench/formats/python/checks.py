"""JSON Schema subschemas as Python boolean expressions, for the checks a
generated model states in validators (``contains``, ``not``, ``if``,
``patternProperties``...).

``Tests.test(schema, var)`` is an expression that is true exactly when the
JSON value named ``var`` is valid (the value as parsed from JSON: dict,
list, str, int, float, bool, None). ``known`` narrows the JSON types the
value already has (after Pydantic validated it), so type checks that would
always pass are left out. None means the subschema holds something an
expression cannot state (``format``, a reference cycle); the caller reports
that keyword as not stated exactly.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from conformbench.formats.python.expr import (
    FALSE,
    TRUE,
    Expr,
    and_,
    count_test,
    declared_test,
    equals_one_of,
    has_all,
    not_,
    or_,
    type_test,
)
from conformbench.formats.python.refs import ANNOTATIONS, Dialect, Resolver
from conformbench.formats.python.source import Imports, regex_literal, string_literal
from conformbench.formats.python.types import python_regex

__all__ = ["Tests"]

_NUMERIC = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
_STRING = ("minLength", "maxLength", "pattern", "format")
_ARRAY = ("items", "prefixItems", "additionalItems", "contains", "minItems", "maxItems", "uniqueItems")
_OBJECT = (
    "properties", "required", "additionalProperties", "patternProperties", "minProperties",
    "maxProperties", "dependentRequired", "dependentSchemas", "propertyNames", "dependencies",
)
#: keywords these expressions cannot state
_UNSTATED = frozenset({"format", "unevaluatedItems", "unevaluatedProperties", "$dynamicRef", "$recursiveRef"})
_LOOP_VARS = ("x", "y", "z", "w")


def _types_of(schema: dict[str, Any]) -> list[str] | None:
    declared = schema.get("type")
    if isinstance(declared, str):
        return [declared]
    if isinstance(declared, list):
        return [t for t in declared if isinstance(t, str)]
    return None


@dataclass
class Tests:
    """Compiles subschemas into expressions; ``imports`` learns about ``re``."""

    resolver: Resolver
    imports: Imports
    dialect: Dialect
    #: paths (relative to the tested schema, or absolute after a ``$ref``,
    #: then starting with "#") of keywords left out because no expression states them
    dropped: list[tuple[str, ...]] = field(default_factory=list)
    _refs: list[str] = field(default_factory=list)
    _where: list[str] = field(default_factory=list)

    @contextmanager
    def _at(self, *parts: str) -> Iterator[None]:
        self._where.extend(parts)
        try:
            yield
        finally:
            del self._where[len(self._where) - len(parts):]

    def sub(self, schema: Any, var: str, known: frozenset[str] | None, depth: int, *where: str) -> Expr | None:
        with self._at(*where):
            return self.test(schema, var, known, depth)

    def test(self, schema: Any, var: str, known: frozenset[str] | None = None, depth: int = 0) -> Expr | None:
        if schema is True or schema == {}:
            return TRUE
        if schema is False:
            return FALSE
        if not isinstance(schema, dict):
            return None
        schema = self.dialect.clean(schema)
        unstated = [k for k in schema if k in _UNSTATED]
        if unstated:
            self.dropped += [(*self._where, k) for k in unstated]
            schema = {k: v for k, v in schema.items() if k not in unstated}
        if "$ref" in schema:
            return self._ref(schema, var, known, depth)
        types = _types_of(schema)
        parts: list[Expr] = []
        if types is not None:
            parts.append(type_test(types, var, known))
            known = frozenset(types) if known is None else known & frozenset(types) or known
        for group, kinds, build in (
            (_NUMERIC, ["number"], self._numeric),
            (_STRING, ["string"], self._string),
            (_ARRAY, ["array"], self._array),
            (_OBJECT, ["object"], self._object),
        ):
            if any(k in schema for k in group):
                body = build(schema, var, depth)
                if body is None:
                    return None
                guard = type_test(kinds, var, known)
                parts.append(body if guard == TRUE else or_(not_(guard), body))
        rest = self._generic(schema, var, known, depth)
        return None if rest is None else and_(*parts, rest)

    def _ref(self, schema: dict[str, Any], var: str, known: frozenset[str] | None, depth: int) -> Expr | None:
        ref = schema["$ref"]
        target = self.resolver.resolve(ref) if isinstance(ref, str) else None
        if target is None or ref in self._refs:
            return None
        self._refs.append(ref)
        saved, self._where = self._where, ["#", *target[1]]
        try:
            inner = self.test(target[0], var, known, depth)
        finally:
            self._refs.pop()
            self._where = saved
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        more = self.test(rest, var, known, depth) if set(rest) - ANNOTATIONS else TRUE
        return None if inner is None or more is None else and_(inner, more)

    def _generic(self, schema: dict[str, Any], var: str, known: frozenset[str] | None, depth: int) -> Expr | None:
        parts: list[Expr] = []
        if "enum" in schema:
            parts.append(equals_one_of(schema["enum"], var, known))
        if "const" in schema:
            parts.append(equals_one_of([schema["const"]], var, known))
        for key in ("allOf", "anyOf", "oneOf"):
            if isinstance(schema.get(key), list):
                subs = [self.sub(s, var, known, depth, key, str(i)) for i, s in enumerate(schema[key])]
                if any(s is None for s in subs):
                    return None
                parts.append(_combine(key, [s for s in subs if s is not None]))
        for key in ("not", "if"):
            if key in schema:
                made = self._not(schema, var, known, depth) if key == "not" else self._if(schema, var, known, depth)
                if made is None:
                    return None
                parts.append(made)
        return and_(*parts)

    def _not(self, schema: dict[str, Any], var: str, known: frozenset[str] | None, depth: int) -> Expr | None:
        inner = self.sub(schema["not"], var, known, depth, "not")
        return None if inner is None else not_(inner)

    def _if(self, schema: dict[str, Any], var: str, known: frozenset[str] | None, depth: int) -> Expr | None:
        cond = self.sub(schema["if"], var, known, depth, "if")
        then = self.sub(schema.get("then", True), var, known, depth, "then")
        other = self.sub(schema.get("else", True), var, known, depth, "else")
        if cond is None or then is None or other is None:
            return None
        if then == TRUE and other == TRUE:
            return TRUE
        if other == TRUE:
            return or_(not_(cond), then)
        if then == TRUE:
            return or_(cond, other)
        return Expr(f"{then.wrapped(3)} if {cond.wrapped(3)} else {other.wrapped(3)}", 4)

    # ------------------------------------------------------------ per type

    def _numeric(self, schema: dict[str, Any], var: str, depth: int) -> Expr | None:
        parts = []
        for key, op, strict_key in (("minimum", ">=", "exclusiveMinimum"), ("maximum", "<=", "exclusiveMaximum")):
            if _number(schema.get(key)):
                parts.append(Expr(f"{var} {op[0] if schema.get(strict_key) is True else op} {schema[key]!r}"))
            if _number(schema.get(strict_key)):
                parts.append(Expr(f"{var} {op[0]} {schema[strict_key]!r}"))
        step = schema.get("multipleOf")
        if isinstance(step, int) and not isinstance(step, bool):
            parts.append(Expr(f"{var} % {step} == 0"))
        elif isinstance(step, float):
            parts.append(Expr(f"({var} / {step!r}).is_integer()"))
        return and_(*parts)

    def _string(self, schema: dict[str, Any], var: str, depth: int) -> Expr | None:
        parts = []
        if isinstance(schema.get("minLength"), int):
            parts.append(Expr(f"len({var}) >= {schema['minLength']}"))
        if isinstance(schema.get("maxLength"), int):
            parts.append(Expr(f"len({var}) <= {schema['maxLength']}"))
        if isinstance(schema.get("pattern"), str):
            parts.append(Expr(f"{self.imports.use('re')}.search({regex_literal(schema['pattern'])}, {var})"))
        return and_(*parts)

    def _array(self, schema: dict[str, Any], var: str, depth: int) -> Expr | None:
        item = _LOOP_VARS[depth] if depth < len(_LOOP_VARS) else f"x{depth}"
        prefix = schema.get("prefixItems")
        rest = schema.get("items", True)
        if isinstance(rest, list):  # draft 4 to 2019-09: items as an array is a prefix
            prefix, rest = rest, schema.get("additionalItems", True)
        parts = []
        for i, sub in enumerate(prefix or []):
            inner = self.sub(sub, f"{var}[{i}]", None, depth, "prefixItems", str(i))
            if inner is None:
                return None
            parts.append(or_(Expr(f"len({var}) <= {i}"), inner))
        each = self.sub(rest, item, None, depth + 1, "items")
        if each is None:
            return None
        if each != TRUE:
            source = f"{var}[{len(prefix)}:]" if prefix else var
            parts.append(Expr(f"all({each.wrapped(3)} for {item} in {source})"))
        counted = self._contains(schema, var, item, depth)
        if counted is None:
            return None
        parts.append(counted)
        for key, op in (("minItems", ">="), ("maxItems", "<=")):
            if isinstance(schema.get(key), int):
                parts.append(Expr(f"len({var}) {op} {schema[key]}"))
        if schema.get("uniqueItems") is True:
            parts.append(Expr(f"all({item} != {item}2 for i, {item} in enumerate({var}) for {item}2 in {var}[:i])"))
        return and_(*parts)

    def _contains(self, schema: dict[str, Any], var: str, item: str, depth: int) -> Expr | None:
        if "contains" not in schema:
            return TRUE
        match = self.sub(schema["contains"], item, None, depth + 1, "contains")
        if match is None:
            return None
        return count_test(match, var, item, schema.get("minContains", 1), schema.get("maxContains"))

    def _object(self, schema: dict[str, Any], var: str, depth: int) -> Expr | None:
        parts: list[Expr] = []
        for build in (self._properties, self._extra_names, self._dependencies):
            made = build(schema, var, depth)
            if made is None:
                return None
            parts.append(made)
        required = [k for k in schema.get("required", []) if isinstance(k, str)]
        if required:
            parts.append(has_all(required, var))
        for key, op in (("minProperties", ">="), ("maxProperties", "<=")):
            if isinstance(schema.get(key), int):
                parts.append(Expr(f"len({var}) {op} {schema[key]}"))
        if "propertyNames" in schema:
            name = self.sub(schema["propertyNames"], "k", frozenset({"string"}), depth + 1, "propertyNames")
            if name is None:
                return None
            parts.append(TRUE if name == TRUE else Expr(f"all({name.wrapped(3)} for k in {var})"))
        return and_(*parts)

    def _properties(self, schema: dict[str, Any], var: str, depth: int) -> Expr | None:
        parts = []
        for name, sub in (schema.get("properties") or {}).items():
            inner = self.sub(sub, f"{var}[{string_literal(name)}]", None, depth, "properties", name)
            if inner is None:
                return None
            parts.append(or_(Expr(f"{string_literal(name)} not in {var}"), inner))
        return and_(*parts)

    def _extra_names(self, schema: dict[str, Any], var: str, depth: int) -> Expr | None:
        item = _LOOP_VARS[depth] if depth < len(_LOOP_VARS) else f"x{depth}"
        parts = []
        patterns = schema.get("patternProperties") or {}
        for pattern, sub in patterns.items():
            python_regex(pattern)
            inner = self.sub(sub, item, None, depth + 1, "patternProperties", pattern)
            if inner is None:
                return None
            if inner != TRUE:
                found = f"{self.imports.use('re')}.search({regex_literal(pattern)}, k)"
                parts.append(Expr(f"all({inner.wrapped(3)} for k, {item} in {var}.items() if {found})"))
        extra = schema.get("additionalProperties", True)
        if extra is not True:
            inner = self.sub(extra, item, None, depth + 1, "additionalProperties")
            if inner is None:
                return None
            other = not_(declared_test(list(schema.get("properties") or {}), list(patterns), "k", self.imports))
            if inner == FALSE:
                parts.append(Expr(f"not any({other.wrapped(3)} for k in {var})", 1))
            elif inner != TRUE:
                parts.append(Expr(f"all({inner.wrapped(3)} for k, {item} in {var}.items() if {other.wrapped(3)})"))
        return and_(*parts)

    def _dependencies(self, schema: dict[str, Any], var: str, depth: int) -> Expr | None:
        rules = dict(schema.get("dependentRequired") or {})
        shapes = dict(schema.get("dependentSchemas") or {})
        for key, value in (schema.get("dependencies") or {}).items():
            (rules if isinstance(value, list) else shapes)[key] = value
        parts = [or_(Expr(f"{string_literal(k)} not in {var}"), has_all(v, var)) for k, v in rules.items() if v]
        for key, sub in shapes.items():
            inner = self.sub(sub, var, frozenset({"object"}), depth, "dependentSchemas", key)
            if inner is None:
                return None
            parts.append(or_(Expr(f"{string_literal(key)} not in {var}"), inner))
        return and_(*parts)


def _combine(key: str, subs: list[Expr]) -> Expr:
    if key == "allOf":
        return and_(*subs)
    if key == "anyOf":
        return or_(*subs)
    if len(subs) == 1:
        return subs[0]
    return Expr(f"sum(map(bool, ({', '.join(s.wrapped(3) for s in subs)}))) == 1")


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)

