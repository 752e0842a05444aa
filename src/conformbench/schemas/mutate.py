"""Single-keyword violations: for each constraint occurrence of a schema,
edit the valid instance where that keyword applies so that the validator
reports exactly that keyword at that schema path, and nothing else.

Occurrences are found by walking the applicators whose inner errors keep
their own schema paths (properties, patternProperties, additionalProperties,
items, prefixItems, allOf). The edit at the target is either a structural
mutation (duplicate an element, drop a required name...) or a re-solve of
the subschema with the keyword replaced by its negation (minimum m becomes
exclusiveMaximum m), both in ``negations``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from conformbench.jsontypes import JSONValue
from conformbench.schemas.case import InvalidInstance, UnisolatedKeyword
from conformbench.schemas.solver import MISSING, BudgetExceeded, Node, Solver, Unsat
from conformbench.schemas.solver_objects import drop_optional, value_nodes
from conformbench.validation.patterns import matches as _matches
from conformbench.validation.validator import SchemaValidator, json_pointer

__all__ = ["Occurrence", "occurrences", "violate_each"]

_TRIES = 40
_TYPES = ("string", "integer", "number", "boolean", "null", "object", "array")


@dataclass(frozen=True)
class Occurrence:
    keyword: str
    #: segments from the root to the subschema that holds the keyword
    path: tuple[str, ...]

    @property
    def schema_path(self) -> str:
        return json_pointer([*self.path, self.keyword])


def _violable(keyword: str, value: Any, schema: dict[str, Any]) -> bool:
    """Whether the keyword constrains anything (``minItems: 0`` does not)."""
    from conformbench.schemas.negations import HANDLERS

    if keyword not in HANDLERS:
        return False
    if keyword == "type":
        names = {value} if isinstance(value, str) else set(value)
        return not ({"number", "string", "boolean", "null", "object", "array"} <= names)
    if keyword in ("minLength", "minItems", "minProperties"):
        return isinstance(value, int) and value > 0
    if keyword == "minContains":
        return "contains" in schema and isinstance(value, int) and value >= 2
    if keyword == "maxContains":
        return "contains" in schema
    if keyword in ("uniqueItems",):
        return value is True
    if keyword in ("items", "additionalProperties"):
        return value is False
    if keyword in ("required", "dependentRequired"):
        return bool(value)
    return True


def occurrences(schema: Any, path: tuple[str, ...] = ()) -> list[Occurrence]:
    """Violable keyword occurrences, in document order."""
    if not isinstance(schema, dict):
        return []
    out = [Occurrence(k, path) for k, v in schema.items() if _violable(k, v, schema)]
    for key, sub in schema.items():
        if key in ("properties", "patternProperties") and isinstance(sub, dict):
            for name, child in sub.items():
                out += occurrences(child, (*path, key, name))
        elif key in ("additionalProperties", "items") and isinstance(sub, dict):
            out += occurrences(sub, (*path, key))
        elif key in ("prefixItems", "allOf") and isinstance(sub, list):
            for i, child in enumerate(sub):
                out += occurrences(child, (*path, key, str(i)))
    return out


def violate_each(
    validator: SchemaValidator, valid: JSONValue
) -> tuple[list[InvalidInstance], list[UnisolatedKeyword]]:
    """One instance per occurrence, or the reason there is none."""
    solver = Solver(validator)
    found: list[InvalidInstance] = []
    missing: list[UnisolatedKeyword] = []
    for occ in occurrences(validator.schema):
        solver.budget = 3000
        try:
            instance = _isolate(solver, validator, occ, valid)
            reason = "no edit violated this keyword alone"
        except (BudgetExceeded, RecursionError):
            instance, reason = MISSING, "search budget exhausted"
        if instance is MISSING:
            missing.append(UnisolatedKeyword(keyword=occ.keyword, schema_path=occ.schema_path, reason=reason))
        else:
            found.append(InvalidInstance(keyword=occ.keyword, schema_path=occ.schema_path, instance=instance))
    return found, missing


def _isolate(solver: Solver, validator: SchemaValidator, occ: Occurrence, valid: JSONValue) -> JSONValue:
    want = (occ.keyword, occ.schema_path)
    for candidate in itertools.islice(_descend(solver, solver.root, valid, occ.path, occ), _TRIES):
        found = validator.violations(candidate)
        if found and all((v.keyword, v.schema_path) == want for v in found):
            return candidate
    return MISSING


def _descend(s: Solver, node: Node, value: JSONValue, path: tuple[str, ...], occ: Occurrence) -> Iterator[JSONValue]:
    """Whole-value candidates for ``value`` at ``node`` with the violation
    placed ``path`` further down."""
    from conformbench.schemas.negations import HANDLERS

    if not path:
        try:
            yield from HANDLERS[occ.keyword](s, node, value)
        except Unsat:
            return
        return
    key = path[0]
    if key in ("properties", "patternProperties", "additionalProperties"):
        yield from _into_property(s, node, value, path, occ)
    elif key in ("items", "prefixItems"):
        yield from _into_item(s, node, value, path, occ)
    elif key == "allOf":
        yield from _descend(s, node.child(node.schema["allOf"][int(path[1])]), value, path[2:], occ)


def _into_property(s: Solver, node: Node, value: JSONValue, path: tuple[str, ...], occ: Occurrence) -> Iterator[JSONValue]:
    if not isinstance(value, dict):
        return
    key = path[0]
    rest = path[1:] if key == "additionalProperties" else path[2:]
    sub = node.schema[key] if key == "additionalProperties" else node.schema[key][path[1]]
    for name in _names_for(s, node, value, path):
        current = value.get(name, MISSING)
        if current is MISSING:
            current = s.first(value_nodes([node], name), 1)
            if current is MISSING:
                continue
        base = value if name in value else _with_dependencies(s, node, value, name)
        for bad in _descend(s, node.child(sub), current, rest, occ):
            out = {**base, name: bad}
            yield out
            if name not in value:  # the added property may break maxProperties
                yield from drop_optional(node, out, name)


def _with_dependencies(s: Solver, node: Node, value: dict[str, Any], name: str) -> dict[str, Any]:
    """``value`` plus what dependentRequired asks for once ``name`` is added."""
    out = dict(value)
    deps = node.get("dependentRequired") or {}
    for dep in deps.get(name, ()) if isinstance(deps, dict) else ():
        if dep not in out:
            got = s.first(value_nodes([node], dep), 1)
            if got is not MISSING:
                out[dep] = got
    return out


def _names_for(s: Solver, node: Node, value: dict[str, Any], path: tuple[str, ...]) -> Iterator[str]:
    """Property names that the subschema at ``path`` governs."""
    declared = node.get("properties") or {}
    patterns = list(node.get("patternProperties") or {})

    def matches(name: str) -> bool:
        return any(_matches(p, name) for p in patterns)

    if path[0] == "properties":
        yield path[1]
        return
    if path[0] == "patternProperties":
        own = [k for k in value if k not in declared and _matches(path[1], k)]
        from conformbench.schemas.regexgen import regex_samples

        fresh = [n for n in regex_samples(path[1], s.rng, 1, 24) if n not in declared]
    else:
        own = [k for k in value if k not in declared and not matches(k)]
        from conformbench.schemas.words import word_pool

        pool = word_pool().names
        fresh = [w for w in (s.rng.choice(pool) for _ in range(8)) if w not in declared and not matches(w)]
    yield from own[:2]
    yield from (n for n in fresh[:3] if n not in value)


def _into_item(s: Solver, node: Node, value: JSONValue, path: tuple[str, ...], occ: Occurrence) -> Iterator[JSONValue]:
    if not isinstance(value, list):
        return
    prefix = node.get("prefixItems") or []
    if path[0] == "prefixItems":
        index, sub, rest = int(path[1]), node.schema["prefixItems"][int(path[1])], path[2:]
    else:
        index, sub, rest = len(prefix), node.schema["items"], path[1:]
    base = list(value)
    while len(base) <= index:
        position = prefix[len(base)] if len(base) < len(prefix) else node.schema.get("items", True)
        extra = s.first([node.child(position)], 1)
        if extra is MISSING:
            return
        base.append(extra)
    indices = [index] + [i for i in range(index + 1, len(base))][:2] if path[0] == "items" else [index]
    for i in indices:
        for bad in _descend(s, node.child(sub), base[i], rest, occ):
            yield [*base[:i], bad, *base[i + 1:]]
    if path[0] == "items":  # a new element, keeping the ones contains counts
        extra = s.first([node.child(sub)], 1)
        if extra is not MISSING:
            for bad in _descend(s, node.child(sub), extra, rest, occ):
                yield [*base, bad]
