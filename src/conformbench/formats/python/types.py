"""One JSON type of a schema as a Pydantic type: numbers and strings with
``Field`` constraints, ``format`` as Pydantic's own types, arrays as
``list``/``tuple``, objects as ``dict`` or a model class."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from conformbench.formats.base import UnrenderableSchemaError
from conformbench.formats.python.expr import Expr, and_, count_test, not_
from conformbench.formats.python.kinds import is_model
from conformbench.formats.python.models import build_model
from conformbench.formats.python.source import regex_literal
from conformbench.formats.python.typed import ANY, Rule, Typed, at_index, for_each, loop_var
from conformbench.validator.pattern_size import PatternTooLarge, check_size

if TYPE_CHECKING:
    from conformbench.formats.python.type_builder import Builder

__all__ = ["FORMAT_TYPES", "ScalarTypes", "item_hint"]

#: format -> (type, why it is not exact or None)
FORMAT_TYPES: dict[str, tuple[str, str | None]] = {
    "date": ("date", None),
    "date-time": ("AwareDatetime", "AwareDatetime also accepts forms RFC 3339 does not (no seconds, a space for 'T')"),
    "time": ("time", "Pydantic's time also accepts a time without a UTC offset"),
    "email": ("EmailStr", "EmailStr checks addresses more strictly than the validator's email format"),
    "idn-email": ("EmailStr", "EmailStr checks addresses more strictly than the validator's idn-email format"),
    "uri": ("AnyUrl", "AnyUrl parses URLs with its own rules, not RFC 3986"),
    "uuid": ("UUID", "UUID also accepts the 32-digit form without hyphens"),
    "ipv4": ("IPv4Address", None),
    "ipv6": ("IPv6Address", "IPv6Address also accepts a zone id (fe80::1%eth0)"),
}
_SCALARS = frozenset({"string", "integer", "number", "boolean", "null"})
_BARE = {"string": "str", "integer": "int", "number": "int | float", "boolean": "bool", "null": "None",
         "array": "list", "object": "dict"}


def _number_value(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _bound(name: str, value: float, integer: bool) -> str:
    """A Field bound; on integers a fractional bound is rounded inward."""
    if integer and isinstance(value, float) and not value.is_integer():
        lower = name in ("ge", "gt")
        return f"ge={math.ceil(value)}" if lower else f"le={math.floor(value)}"
    return f"{name}={int(value) if integer else value!r}"


@dataclass
class ScalarTypes:
    b: Builder

    def member(self, kind: str, schema: dict[str, Any], path: tuple[str, ...], hint: str) -> Typed:
        if kind == "null":
            return Typed("None", known=frozenset({"null"}), pyclass="None")
        if kind == "boolean":
            return Typed("bool", known=frozenset({"boolean"}), pyclass="bool")
        if kind in ("integer", "number"):
            return self.number(kind == "integer", schema, path)
        if kind == "string":
            return self.string(schema, path)
        if kind == "array":
            return Arrays(self.b).array(schema, path, hint)
        if kind == "object":
            return self.object(schema, path, hint)
        raise UnrenderableSchemaError("python", f"unknown type {kind!r}")

    def number(self, integer: bool, schema: dict[str, Any], path: tuple[str, ...]) -> Typed:
        args = []
        for key, name in (("minimum", "ge"), ("exclusiveMinimum", "gt"), ("maximum", "le"), ("exclusiveMaximum", "lt")):
            value: Any = schema.get(key)
            if _number_value(value):
                draft4_exclusive = schema.get("exclusive" + key[0].upper() + key[1:]) is True
                args.append(_bound(name[0] + "t" if draft4_exclusive else name, value, integer))
        rules = []
        step: Any = schema.get("multipleOf")
        if _number_value(step):
            if integer and float(step).is_integer():
                args.append(f"multiple_of={int(step)}")
            elif integer:
                rules.append(Rule(lambda v, d: Expr(f"not ({v} / {step!r}).is_integer()", 1),
                                  f"must be a multiple of {step!r}"))
            else:
                args.append(f"multiple_of={step!r}")
                if not float(step).is_integer():
                    self.b.report(path, "multipleOf", "Pydantic's multiple_of on floats allows a rounding error; "
                                  "JSON Schema validators divide exactly (19.99 is no multiple of 0.01 to them)")
        base = "int" if integer else "float"
        kind = frozenset({"integer" if integer else "number"})
        return Typed(base, tuple(args), rules=tuple(rules), known=kind, pyclass=base)

    def string(self, schema: dict[str, Any], path: tuple[str, ...]) -> Typed:
        args = []
        for key, name in (("minLength", "min_length"), ("maxLength", "max_length")):
            if isinstance(schema.get(key), int) and not isinstance(schema.get(key), bool):
                args.append(f"{name}={schema[key]}")
        pattern = schema.get("pattern")
        if isinstance(pattern, str):
            python_regex(pattern)
            args.append(f"pattern={regex_literal(pattern)}")
            if self.b.patterns:
                self.b.patterns[-1] = True
        fmt = schema.get("format")
        if isinstance(fmt, str):
            typed = self._format(fmt, bool(args), path)
            if typed is not None:
                return typed
        return Typed("str", tuple(args), known=frozenset({"string"}), pyclass="str")

    def _format(self, fmt: str, constrained: bool, path: tuple[str, ...]) -> Typed | None:
        found = FORMAT_TYPES.get(fmt)
        if found is None:
            self.b.report(path, "format", f"Pydantic has no type for format {fmt!r}; shown as str")
            return None
        if constrained:
            self.b.report(path, "format", "with length or pattern constraints the value is shown as str")
            return None
        name, reason = found
        if reason:
            self.b.report(path, "format", reason)
        return Typed(name, known=frozenset({"string"}), raw=False, pyclass=name)

    def object(self, schema: dict[str, Any], path: tuple[str, ...], hint: str) -> Typed:
        as_object = {**schema, "type": "object"}
        if is_model(as_object):
            return self.b.model_type(build_model(self.b, as_object, path, hint, [], key=None if path else "#object"))
        extra = schema.get("additionalProperties", schema.get("unevaluatedProperties", True))
        value = self.b.typed(extra, (*path, "additionalProperties"), f"{hint}Value") if extra is not True else ANY
        bounds = (("minProperties", "min_length"), ("maxProperties", "max_length"))
        args = [f"{name}={schema[key]}" for key, name in bounds if isinstance(schema.get(key), int)]
        if extra is False:
            args = ["max_length=0"]
            value = ANY
        rules = [for_each(r, ".values()") for r in value.value_rules()]
        if "propertyNames" in schema:
            rules += self._names(schema["propertyNames"], path)
        base = "dict" if value == ANY else f"dict[str, {value.annotation()}]"
        return Typed(base, tuple(args), rules=tuple(rules),
                     known=frozenset({"object"}), raw=value.raw, pyclass="dict", forward=value.forward)

    def _names(self, names: Any, path: tuple[str, ...]) -> list[Rule]:
        if self.b.test(names, "k", frozenset({"string"}), path=(*path, "propertyNames")) is None:
            self.b.report(path, "propertyNames", "a condition the rendering cannot state is left out")
            return []
        def bad(var: str, depth: int) -> Expr:
            fits = self.b.retest(names, "k", frozenset({"string"}), depth)
            return Expr(f"any({not_(fits).wrapped(3)} for k in {var})")
        return [Rule(bad, "has a property name that is not allowed")]


@dataclass
class Arrays:
    b: Builder

    def array(self, schema: dict[str, Any], path: tuple[str, ...], hint: str) -> Typed:
        args = [f"{name}={schema[key]}" for key, name in (("minItems", "min_length"), ("maxItems", "max_length"))
                if isinstance(schema.get(key), int) and not isinstance(schema.get(key), bool)]
        prefix, rest, rest_key = schema.get("prefixItems"), schema.get("items", True), "items"
        if isinstance(rest, list):  # drafts 4 to 2019-09: items as an array is a prefix
            prefix, rest, rest_key = rest, schema.get("additionalItems", True), "additionalItems"
        if rest is True and "unevaluatedItems" in schema:
            rest, rest_key = schema["unevaluatedItems"], "unevaluatedItems"
        item: Typed | None = None
        if isinstance(prefix, list) and rest is False:
            typed = self._tuple(prefix, schema, path, hint)
        elif isinstance(prefix, list):
            typed = self._open_prefix(prefix, rest, tuple(args), path, rest_key)
        elif rest is False:
            typed = Typed("list", ("max_length=0",), known=frozenset({"array"}), pyclass="list")
        else:
            item = self.b.typed(rest, (*path, rest_key), item_hint(hint))
            rules = [for_each(r) for r in item.value_rules()]
            base = "list" if item == ANY else f"list[{item.annotation()}]"
            typed = Typed(base, tuple(args), rules=tuple(rules), known=frozenset({"array"}),
                          raw=item.raw, pyclass="list", forward=item.forward)
        if schema.get("uniqueItems") is True:
            typed = typed.with_rules(self._unique(item, rest, path))
        if "contains" in schema:
            typed = typed.with_rules(*self._contains(schema, item if item else None, typed, path))
        return typed

    def _tuple(self, prefix: list[Any], schema: dict[str, Any], path: tuple[str, ...], hint: str) -> Typed:
        members = [self.b.typed(s, (*path, "prefixItems", str(i)), f"{item_hint(hint)}{i + 1}")
                   for i, s in enumerate(prefix)]
        low = schema.get("minItems", 0)
        high = schema.get("maxItems", len(prefix))
        if not (isinstance(low, int) and low >= len(prefix)) or not (isinstance(high, int) and high >= len(prefix)):
            self.b.report(path, "prefixItems",
                          f"a tuple needs all {len(prefix)} items; JSON Schema also accepts shorter arrays")
        rules = []
        for i, m in enumerate(members):
            rules += [at_index(r, i) for r in m.value_rules()]
        inner = ", ".join(m.annotation() for m in members) or "()"
        return Typed(f"tuple[{inner}]", (), rules=tuple(rules), known=frozenset({"array"}), raw=False,
                     pyclass="tuple", forward=any(m.forward for m in members))

    def _open_prefix(
        self, prefix: list[Any], rest: Any, args: tuple[str, ...], path: tuple[str, ...], rest_key: str,
    ) -> Typed:
        """A list of the positions' plain types, with each position checked."""
        kinds = [_bare(s) for s in [*prefix, rest]]
        inner = "" if "Any" in kinds else " | ".join(dict.fromkeys(k for ks in kinds for k in ks.split(" | ")))
        rules = []
        for i, sub in enumerate(prefix):
            if self.b.test(sub, "v", path=(*path, "prefixItems", str(i))) is None:
                self.b.report(path, "prefixItems", "a condition the rendering cannot state is left out", (str(i),))
                continue
            rules.append(self._position(sub, i))
        if self.b.test(rest, "x", path=(*path, rest_key)) is None:
            self.b.report(path, rest_key, "a condition the rendering cannot state is left out")
        elif rest is not True:
            rules.append(self._rest(rest, len(prefix)))
        return Typed(f"list[{inner}]" if inner else "list", args, rules=tuple(rules), known=frozenset({"array"}),
                     pyclass="list")

    def _rest(self, rest: Any, start: int) -> Rule:
        def bad(var: str, depth: int) -> Expr:
            item = loop_var(depth)
            fits = self.b.retest(rest, item, None, depth + 1)
            return Expr(f"any({not_(fits).wrapped(3)} for {item} in {var}[{start}:])")
        return Rule(bad, f"items after the first {start} are not valid")

    def _position(self, sub: Any, index: int) -> Rule:
        def bad(var: str, depth: int) -> Expr:
            return and_(Expr(f"len({var}) > {index}"), not_(self.b.retest(sub, f"{var}[{index}]", None, depth)))
        return Rule(bad, f"item {index} is not valid")

    def _unique(self, item: Typed | None, rest: Any, path: tuple[str, ...]) -> Rule:
        known = item.known if item else None
        mixed = known is None or ("boolean" in known and bool(known & {"integer", "number"}))
        if mixed:
            self.b.report(path, "uniqueItems", "items are compared with ==, where true == 1")
        elif item is not None and not item.raw and "object" in known:  # type: ignore[operator]
            closed = isinstance(rest, dict) and rest.get("additionalProperties") is False
            if not closed:
                self.b.report(path, "uniqueItems", "items are compared as models, which drop properties they ignore")
        elif item is not None and not item.raw and item.pyclass != "date":
            self.b.report(path, "uniqueItems", "items are compared after parsing (two spellings of a value are equal)")
        if not mixed and known is not None and known <= _SCALARS:
            return Rule(lambda v, d: Expr(f"len(set({v})) < len({v})"), "items must be unique")
        def bad(var: str, depth: int) -> Expr:
            x, y = loop_var(depth), loop_var(depth + 1)
            return Expr(f"any({x} == {y} for i, {x} in enumerate({var}) for {y} in {var}[:i])")
        return Rule(bad, "items must be unique")

    def _contains(self, schema: dict[str, Any], item: Typed | None, typed: Typed, path: tuple[str, ...]) -> list[Rule]:
        known = item.known if item and item.raw else None
        usable = typed.raw and (item is None or item.raw)
        if not usable or self.b.test(schema["contains"], "x", known, path=(*path, "contains")) is None:
            self.b.report(path, "contains", "a condition the rendering cannot state is left out")
            return []
        low, high = schema.get("minContains", 1), schema.get("maxContains")
        message = _count_message(low, high)
        return [Rule(lambda v, d: not_(count_test(self.b.retest(schema["contains"], loop_var(d), known, d + 1),
                                                  v, loop_var(d), low, high)), message)]


def item_hint(hint: str) -> str:
    """The class name hint for the items of ``hint`` (``tags`` -> ``Tag``)."""
    if hint == "Schema":
        return "Item"
    if len(hint) > 3 and hint.endswith("s") and not hint.endswith("ss"):
        return hint[:-1]
    return hint + "Item"


def _count_message(low: Any, high: Any) -> str:
    low = low if isinstance(low, int) else 1
    if isinstance(high, int):
        return f"needs {low} to {high} matching items" if low > 0 else f"allows at most {high} matching items"
    return f"needs at least {low} matching item{'s' if low != 1 else ''}"


def _bare(schema: Any) -> str:
    """The plain Python type of the values a position takes ('Any' if mixed)."""
    if not isinstance(schema, dict):
        return "Any"
    declared = schema.get("type")
    types = [declared] if isinstance(declared, str) else declared if isinstance(declared, list) else None
    if types is None and ("enum" in schema or "const" in schema):
        values = schema.get("enum", [schema.get("const")])
        types = sorted({_value_type(v) for v in values}) if isinstance(values, list) else None
    if not types:
        return "Any"
    order = ("string", "integer", "number", "boolean", "null", "array", "object")
    return " | ".join(_BARE[t] for t in order if t in types)


def _value_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def python_regex(pattern: str) -> None:
    """UnrenderableSchemaError unless Python's ``re`` compiles ``pattern``:
    the rendered model reads it with ``re``."""
    try:
        check_size(pattern)
        re.compile(pattern)
    except (re.error, PatternTooLarge) as exc:
        raise UnrenderableSchemaError(
            "python", f"pattern {pattern!r} is not a Python regular expression: {exc}") from None
