"""Single-keyword violations: for each constraint occurrence of a schema,
edit the valid instance where that keyword applies so that the validator
reports exactly that keyword at that schema path, and nothing else.

Occurrences are found by ``occurrences`` (applicators whose inner errors
keep their own schema paths, and local references). The edit at the target is either a structural
mutation (duplicate an element, drop a required name...) or a re-solve of
the subschema with the keyword replaced by its negation (minimum m becomes
exclusiveMaximum m), both in ``negations``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from conformbench.jsontypes import JSONValue
from conformbench.schemas.case import InvalidInstance, UnisolatedKeyword
from conformbench.schemas.occurrences import Occurrence, occurrences
from conformbench.schemas.solver.core import (
    MISSING,
    BudgetExceeded,
    MaybeJSON,
    Node,
    Solver,
    Unsat,
    item_schema,
    tuple_length,
)
from conformbench.schemas.solver.object_handler import drop_optional, value_nodes
from conformbench.schemas.solver.type_handlers import TYPE_HANDLERS
from conformbench.validator.patterns import matches as _matches
from conformbench.validator.schema_validator import SchemaValidator

__all__ = ["violate_each"]

_TRIES = 40
_TYPES = ("string", "integer", "number", "boolean", "null", "object", "array")


#: per constraint: validations, and search steps (see Solver.steps)
_CHECKS, _STEPS = 3000, 60_000
#: per schema, over all its constraints: a large real-world schema has
#: thousands, and the search for each may cost seconds
_SCHEMA_CHECKS, _SCHEMA_STEPS = 30_000, 3_000_000


def violate_each(
    validator: SchemaValidator, valid: JSONValue
) -> tuple[list[InvalidInstance], list[UnisolatedKeyword]]:
    """One instance per occurrence, or the reason there is none."""
    solver = Solver(validator, TYPE_HANDLERS)
    found: list[InvalidInstance] = []
    missing: list[UnisolatedKeyword] = []
    try:
        listed = occurrences(solver)
    except RecursionError:
        return [], [UnisolatedKeyword(keyword="*", schema_path="", reason="schema nested too deeply to walk")]
    checks, steps = _SCHEMA_CHECKS, _SCHEMA_STEPS
    for occ in listed:
        if checks <= 0 or steps <= 0:
            reason = f"the search budget for this schema ({_SCHEMA_CHECKS} validations) is spent"
            missing.append(UnisolatedKeyword(keyword=occ.keyword, schema_path=occ.schema_path, reason=reason))
            continue
        solver.reset(min(_CHECKS, checks), min(_STEPS, steps))
        instance, reason = _isolate_or_why(solver, validator, occ, valid)
        checks -= min(_CHECKS, checks) - max(solver.budget, 0)
        steps -= min(_STEPS, steps) - max(solver.steps, 0)
        if instance is MISSING:
            missing.append(UnisolatedKeyword(keyword=occ.keyword, schema_path=occ.schema_path, reason=reason))
        else:
            found.append(InvalidInstance(keyword=occ.keyword, schema_path=occ.schema_path, instance=instance))
    return found, missing


def _isolate_or_why(solver: Solver, validator: SchemaValidator, occ: Occurrence,
                    valid: JSONValue) -> tuple[MaybeJSON, str]:
    try:
        return _isolate(solver, validator, occ, valid), "no edit violated this keyword alone"
    except (BudgetExceeded, RecursionError):
        return MISSING, "search budget exhausted"
    except Unsat as exc:  # e.g. no value for a property the edit adds
        return MISSING, f"no value fits around the edit: {exc}"
    except Exception as exc:  # noqa: BLE001 - untrusted schemas: recorded, never a lost build
        return MISSING, f"the mutator failed: {type(exc).__name__}: {exc}"


def _isolate(solver: Solver, validator: SchemaValidator, occ: Occurrence, valid: JSONValue) -> MaybeJSON:
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
    elif key in ("items", "prefixItems", "additionalItems"):
        yield from _into_item(s, node, value, path, occ)
    elif key == "allOf":
        yield from _descend(s, node.child(node.schema["allOf"][int(path[1])]), value, path[2:], occ)
    elif key == "$ref":
        yield from _descend(s, s.lookup(node, node.schema["$ref"]), value, path[1:], occ)


def _first(s: Solver, nodes: list[Node]) -> MaybeJSON:
    """A value for a place the edit fills in, MISSING where there is none
    (a proof that none exists just skips this candidate place)."""
    try:
        return s.first(nodes, 1)
    except Unsat:
        return MISSING


def _into_property(s: Solver, node: Node, value: JSONValue, path: tuple[str, ...], occ: Occurrence) -> Iterator[JSONValue]:
    if not isinstance(value, dict):
        return
    key = path[0]
    rest = path[1:] if key == "additionalProperties" else path[2:]
    sub = node.schema[key] if key == "additionalProperties" else node.schema[key][path[1]]
    for name in _names_for(s, node, value, path):
        current: MaybeJSON = value.get(name, MISSING)
        if current is MISSING:
            current = _first(s, value_nodes([node], name))
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
            got = _first(s, value_nodes([node], dep))
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
    # one fixed position (prefixItems, or items written as a list), or every
    # position past those (items in 2020-12, additionalItems before)
    fixed = path[0] == "prefixItems" or (path[0] == "items" and isinstance(node.get("items"), list))
    index, rest = (int(path[1]), path[2:]) if fixed else (tuple_length(node.schema), path[1:])
    sub = item_schema(node.schema, index)
    base = list(value)
    while len(base) <= index:
        position = item_schema(node.schema, len(base))
        extra = _first(s, [node.child(True if position is None else position)])
        if extra is MISSING:
            return
        base.append(extra)
    indices = [index] if fixed else [index, *range(index + 1, len(base))][:3]
    for i in indices:
        for bad in _descend(s, node.child(sub), base[i], rest, occ):
            yield [*base[:i], bad, *base[i + 1:]]
    if not fixed:  # a new element, keeping the ones contains counts
        extra = _first(s, [node.child(sub)])
        if extra is not MISSING:
            for bad in _descend(s, node.child(sub), extra, rest, occ):
                yield [*base, bad]
