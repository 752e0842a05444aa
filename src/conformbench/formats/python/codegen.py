"""JSON Schema -> Pydantic v2 source, written the way people write models.

One ``BaseModel`` per object (``model_config = ConfigDict(strict=True)``,
because JSON Schema never turns ``"1"`` into 1), typed fields with
``Field(...)`` constraints, ``Literal`` for ``enum``/``const``, ``list``,
``tuple`` and ``dict`` for arrays and maps, unions for several types and
``anyOf``/``oneOf``, ``X | None`` where null is allowed. What a type cannot
say (``uniqueItems``, ``contains``, ``not``, ``if``, ``patternProperties``,
property counts, ``dependentRequired``...) is a short validator written for
that one field or model.

Where the concise form is not exact, the keyword is recorded as an
``InexactKeyword`` (``python_rendering``); docs/formats.md lists them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from conformbench.errors import SchemaError
from conformbench.formats.base import UnrenderableSchemaError
from conformbench.formats.python.checks import Tests
from conformbench.formats.python.enums import equality_confuses, literal_type
from conformbench.formats.python.expr import TRUE, Expr, not_
from conformbench.formats.python.kinds import implied_types, is_model, split_conditions
from conformbench.formats.python.models import build_model, class_key
from conformbench.formats.python.refs import ANNOTATIONS, Dialect, Resolver, expand, merge, same
from conformbench.formats.python.source import Imports, Names, literal
from conformbench.formats.python.typed import ANY, InexactKeyword, Rule, Typed, always, union
from conformbench.formats.python.types import ScalarTypes
from conformbench.jsontypes import JSONValue
from conformbench.validator.schema_validator import validator_for

__all__ = ["TypeBuilder"]

#: keywords of the vocabulary that no rendering here states
_NOT_STATED = ("$dynamicRef", "$recursiveRef")


@dataclass
class TypeBuilder:
    """Turns subschemas into type expressions, collecting classes, imports
    and the keywords it could not state exactly."""

    resolver: Resolver
    names: Names
    imports: Imports = field(default_factory=Imports)
    classes: list[str] = field(default_factory=list)
    rebuilds: list[str] = field(default_factory=list)
    inexact: list[InexactKeyword] = field(default_factory=list)
    #: class key (schema path) -> name, for classes finished or in progress
    class_keys: dict[str, str] = field(default_factory=dict)
    #: names of the classes being built, innermost last
    current: list[str] = field(default_factory=list)
    #: whether the class being built uses a regex ``pattern``
    patterns: list[bool] = field(default_factory=list)
    field_names: set[str] = field(default_factory=set)
    _inline_refs: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.dialect = Dialect.of(self.resolver.root)
        self.tests = Tests(self.resolver, self.imports, self.dialect)

    # ------------------------------------------------------------ helpers

    def use(self, module: str, name: str = "") -> str:
        return self.imports.use(module, name)

    def report(self, path: tuple[str, ...], keyword: str, reason: str, tail: tuple[str, ...] = ()) -> None:
        """Record ``keyword`` at ``path`` (``tail``: segments below the keyword,
        such as a patternProperties pattern) as not stated exactly."""
        pointer = "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in (*path, keyword, *tail))
        item = InexactKeyword(keyword, pointer, reason)
        if item not in self.inexact:
            self.inexact.append(item)

    def test(self, schema: Any, var: str, known: frozenset[str] | None = None, *,
             path: tuple[str, ...] | None = None) -> Expr | None:
        """The expression test of ``schema`` on ``var`` (None if none exists);
        keywords it leaves out are reported, relative to ``path``."""
        self.tests.dropped.clear()
        made = self.tests.test(schema, var, known, 0)
        for rel in self.tests.dropped if path is not None else []:
            full = rel[1:] if rel[:1] == ("#",) else (*(path or ()), *rel)
            self.report(full[:-1], full[-1], _DROPPED.get(full[-1], "not checked inside this validator"))
        return made

    # ------------------------------------------------------------ entry

    def typed(self, schema: Any, path: tuple[str, ...], hint: str) -> Typed:
        if schema is True:
            return ANY
        if schema is False:
            return ANY.with_rules(always("no value is allowed here"))
        if not isinstance(schema, dict):
            where = "/".join(path) or "the root"
            raise UnrenderableSchemaError("python", f"the schema at {where} is not an object or boolean")
        schema = self.dialect.clean(schema)
        for key in _NOT_STATED:
            if key in schema:
                self.report(path, key, "dynamic references are not followed; the rendering ignores this one")
        if isinstance(schema.get("$ref"), str) and not set(schema) - ANNOTATIONS - {"$ref"}:
            return self.ref(schema["$ref"], path, hint)
        fragments: list[tuple[str, Any]] = []
        if "allOf" in schema or "$ref" in schema:
            schema, leftovers = expand(schema, self.resolver)
            fragments += [("allOf", sub) for sub in leftovers]
            if "$ref" in schema:
                self.report(path, "$ref", f"cannot follow {schema['$ref']!r}; the rendering ignores it")
        schema, more = split_conditions(schema)
        fragments += more
        conditional = fragments or any(k in schema for k in ("if", "anyOf", "oneOf", "dependentSchemas"))
        for key in ("unevaluatedProperties", "unevaluatedItems"):
            if key in schema and (conditional or (key == "unevaluatedItems" and "contains" in schema)):
                self.report(path, key, "shown as additionalProperties/items: it does not see what conditions evaluate")
        if "anyOf" in schema or "oneOf" in schema:
            return self._checked(self._choice(schema, path, hint), fragments, path)
        if is_model(schema):
            if "type" not in schema:
                self.report(path, "type", "no type: shown as a model, while JSON Schema also accepts non-objects")
            return self.model_type(build_model(self, schema, path, hint, fragments))
        return self._checked(self._value(schema, path, hint), fragments, path)

    def model_type(self, name: str, forward: bool = False) -> Typed:
        return Typed(name, known=frozenset({"object"}), raw=False, pyclass=name, forward=forward)

    def ref(self, ref: str, path: tuple[str, ...], hint: str) -> Typed:
        target = self.resolver.resolve(ref)
        if target is None or not isinstance(target[0], (dict, bool)):
            self.report(path, "$ref", f"cannot follow {ref!r}; shown as Any")
            return ANY
        schema, where = target
        key = class_key(where)
        if key in self.class_keys:
            name = self.class_keys[key]
            forward = name in self.current
            if forward and self.current[-1] != name and self.current[-1] not in self.rebuilds:
                self.rebuilds.append(self.current[-1])
            return self.model_type(name, forward)
        if ref in self._inline_refs:
            self.report(path, "$ref", "a recursive reference to a non-object schema is shown as Any")
            return ANY
        self._inline_refs.append(ref)
        try:
            return self.typed(schema, where, where[-1] if where else "Schema")
        finally:
            self._inline_refs.pop()

    def _checked(self, typed: Typed, fragments: list[tuple[str, Any]], path: tuple[str, ...]) -> Typed:
        """``typed`` with the fragments (not, if, leftover allOf parts) as rules."""
        rules = []
        for keyword, fragment in fragments:
            test = self.test(fragment, "v", typed.known, path=path) if typed.raw else None
            if test is None:
                self.report(path, keyword, "a condition the rendering cannot state is left out")
                continue
            rules.append(self._condition_rule(fragment, typed.known, _FRAGMENT_MESSAGES.get(keyword, "is not valid")))
        return typed.with_rules(*rules) if rules else typed

    def _condition_rule(self, fragment: Any, known: frozenset[str] | None, message: str) -> Rule:
        def bad(var: str, depth: int) -> Expr:
            return not_(self.retest(fragment, var, known, depth))
        return Rule(bad, message)

    def retest(self, schema: Any, var: str, known: frozenset[str] | None, depth: int) -> Expr:
        """The test of a schema already found testable (``test``), for a rule."""
        made = self.tests.test(schema, var, known, depth)
        return TRUE if made is None else made

    # ------------------------------------------------------------ choices

    def _choice(self, schema: dict[str, Any], path: tuple[str, ...], hint: str) -> Typed:
        key = "anyOf" if "anyOf" in schema else "oneOf"
        branches = [b for b in schema[key]] if isinstance(schema[key], list) else []
        rest = {k: v for k, v in schema.items() if k != key}
        if "anyOf" in rest and "oneOf" in rest:  # both: the oneOf becomes a checked condition
            rest = {k: v for k, v in rest.items() if k != "oneOf"}
        members = [self._branch(rest, b, (*path, key, str(i)), f"{hint}Option{i + 1}")
                   for i, b in enumerate(branches)]
        made = union(members)
        if made is None:
            self.report(path, key, "checks inside the alternatives cannot be told apart; they are left out")
            made = union([Typed(m.base, m.args, m.nullable, (), m.known, m.raw, m.pyclass, m.forward)
                          for m in members]) or ANY
        if key == "oneOf" and len(branches) > 1 and not _disjoint(members, branches, self.resolver):
            made = self._only_one(made, branches, path)
        return made

    def _branch(self, rest: dict[str, Any], branch: Any, path: tuple[str, ...], hint: str) -> Typed:
        if branch is True:
            branch = {}
        if not set(rest) - ANNOTATIONS or not isinstance(branch, dict):
            return self.typed(branch, path, hint)
        target = branch
        if isinstance(branch.get("$ref"), str) and len(branch) == 1:
            found = self.resolver.resolve(branch["$ref"])
            target = found[0] if found and isinstance(found[0], dict) else branch
        merged, leftovers = merge(target, {k: v for k, v in rest.items() if k not in ANNOTATIONS})
        if same(merged, target) and not leftovers:
            return self.typed(branch, path, hint)
        return self.typed({**merged, "allOf": leftovers} if leftovers else merged, path, hint)

    def _only_one(self, made: Typed, branches: list[Any], path: tuple[str, ...]) -> Typed:
        tests = [self.test(b, "v", path=(*path, "oneOf", str(i))) for i, b in enumerate(branches)]
        if not made.raw or any(t is None for t in tests):
            self.report(path, "oneOf", "a union also accepts values that match several alternatives")
            return made

        def bad(var: str, depth: int) -> Expr:
            matches = ", ".join(self.retest(b, var, None, depth).wrapped(3) for b in branches)
            return Expr(f"sum(map(bool, ({matches},))) != 1")
        return made.with_rules(Rule(bad, "must match exactly one alternative"))

    # ------------------------------------------------------------ values

    def _value(self, schema: dict[str, Any], path: tuple[str, ...], hint: str) -> Typed:
        if "enum" in schema or "const" in schema:
            return self._enum(schema, path)
        types = implied_types(schema)
        if types is None:
            return ANY
        if "type" not in schema:
            shown = " | ".join(types)
            self.report(path, "type", f"no type: shown as {shown}, while JSON Schema also accepts other types")
        if "number" in types and "integer" in types:
            types = [t for t in types if t != "integer"]
        scalars = ScalarTypes(self)
        members = [scalars.member(t, schema, path, hint) for t in types]
        return union(members) or ANY

    def _enum(self, schema: dict[str, Any], path: tuple[str, ...]) -> Typed:
        keyword = "const" if "const" in schema else "enum"
        values: list[JSONValue] = list(schema["enum"]) if "enum" in schema else [schema["const"]]
        if "enum" in schema and "const" in schema:
            values = [schema["const"]] if any(same(schema["const"], v) for v in values) else []
        rest = {k: v for k, v in schema.items() if k not in ("enum", "const") and k not in ANNOTATIONS}
        if rest:
            try:
                check = validator_for(rest)
                values = [v for v in values if check.is_valid(v)]
            except SchemaError:
                pass
        if not values:
            return ANY.with_rules(always("no value is allowed here"))
        if equality_confuses(values):
            self.report(path, keyword, "values are compared with ==, so true also matches 1 and false 0")
        return literal_type(values)


_DROPPED = {
    "format": "format is not checked inside this validator",
    "unevaluatedProperties": "unevaluatedProperties is not checked inside this validator",
    "unevaluatedItems": "unevaluatedItems is not checked inside this validator",
}

_FRAGMENT_MESSAGES = {
    "not": "matches a schema it must not match",
    "if": "breaks an if/then/else condition",
    "anyOf": "matches none of the alternatives",
    "oneOf": "must match exactly one alternative",
    "allOf": "breaks one of the allOf conditions",
}


def _disjoint(members: list[Typed], branches: list[Any], resolver: Resolver) -> bool:
    """No value can match two alternatives: different JSON types, or objects
    told apart by a property with different constant values."""
    kinds = [_widened(m.known) for m in members]
    if all(k is not None for k in kinds) and all(
        not (a & b) for i, a in enumerate(kinds) for b in kinds[i + 1:]  # type: ignore[operator]
    ):
        return True
    bodies = []
    for b in branches:
        if isinstance(b, dict) and isinstance(b.get("$ref"), str):
            found = resolver.resolve(b["$ref"])
            b = found[0] if found else b
        bodies.append(b if isinstance(b, dict) else {})
    return _tagged(bodies)


def _widened(known: frozenset[str] | None) -> frozenset[str] | None:
    if known is not None and "integer" in known:
        return known | {"number"}
    if known is not None and "number" in known:
        return known | {"integer"}
    return known


def _tagged(bodies: list[dict[str, Any]]) -> bool:
    required = [set(b.get("required", [])) for b in bodies]
    common = set.intersection(*required) if required else set()
    for name in sorted(common):
        values = []
        for b in bodies:
            prop = (b.get("properties") or {}).get(name)
            if not isinstance(prop, dict) or not ("const" in prop or "enum" in prop):
                break
            values.append(prop["enum"] if "enum" in prop else [prop["const"]])
        else:
            flat = [literal(v) for vs in values for v in vs]
            if len(flat) == len(set(flat)):
                return True
    return False
