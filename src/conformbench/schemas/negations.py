"""How to violate one keyword of a subschema, keyword by keyword (a table,
like python-jsonschema's). A handler takes the valid value at the
subschema's location and yields replacement values meant to break only that
keyword; ``mutate`` keeps the ones the validator confirms."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

from conformbench.jsontypes import JSONValue
from conformbench.schemas.solver.core import (
    MAX_SIZE,
    MISSING,
    MaybeJSON,
    Node,
    Solver,
    Unsat,
    item_schema,
    tuple_length,
)
from conformbench.schemas.solver.object_handler import drop_optional as _drop_optional
from conformbench.schemas.solver.object_handler import value_nodes
from conformbench.schemas.solver.type_handlers import unique_key
from conformbench.validator.patterns import matches

__all__ = ["HANDLERS"]

Handler = Callable[[Solver, Node, JSONValue], Iterator[JSONValue]]
_TYPE_KEYWORDS = {
    "string": ("minLength", "maxLength", "pattern", "format"),
    "number": ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"),
    "object": ("properties", "required", "additionalProperties", "patternProperties",
               "minProperties", "maxProperties", "dependentRequired", "propertyNames"),
    "array": ("items", "prefixItems", "contains", "minItems", "maxItems", "uniqueItems"),
}


def _resolve(s: Solver, node: Node, drop: tuple[str, ...], add: dict[str, Any]) -> Iterator[JSONValue]:
    """Values of the subschema with ``drop`` removed and ``add`` merged in."""
    schema = {k: v for k, v in node.schema.items() if k not in drop}
    schema.update(add)
    yield from itertools.islice(s.solve([Node(schema, node.resolver, node.spec)], 1), 12)


def _resolving(keyword: str, negation: Callable[[Any], dict[str, Any]],
               also_drop: tuple[str, ...] = ()) -> Handler:
    """Re-solve the subschema with ``keyword`` replaced by its negation."""

    def handler(s: Solver, node: Node, value: JSONValue) -> Iterator[JSONValue]:
        return _resolve(s, node, (keyword, *also_drop), negation(node.schema[keyword]))

    return handler


def _type(s: Solver, node: Node, value: JSONValue) -> Iterator[JSONValue]:
    declared = node.schema["type"]
    names = {declared} if isinstance(declared, str) else set(declared)
    others = [t for t in ("string", "boolean", "null", "object", "array", "integer", "number")
              if t not in names and not (t == "integer" and "number" in names)
              and not (t == "number" and "integer" in names)]

    def noise(t: str) -> int:  # siblings that would also judge a value of type t
        return sum(k in node.schema for k in _TYPE_KEYWORDS.get("number" if t == "integer" else t, ()))

    others.sort(key=noise)
    if others:
        yield from _resolve(s, node, ("type",), {"type": others})


def _shorter(key: str, cap: str) -> Handler:
    """min<X> n: fewer than n (structurally, then by re-solving)."""

    def handler(s: Solver, node: Node, value: JSONValue) -> Iterator[JSONValue]:
        n = node.schema[key]
        if isinstance(value, list):
            yield value[: n - 1]
        elif isinstance(value, dict):
            required = set(node.get("required") or ())
            keep = [k for k in value if k in required]
            keep += [k for k in value if k not in required][: max(0, n - 1 - len(keep))]
            yield {k: value[k] for k in value if k in keep}
        yield from _resolve(s, node, (key,), {cap: n - 1})

    return handler


def _longer(key: str, floor: str) -> Handler:
    """max<X> n: more than n (by growing the value, then by re-solving)."""

    def handler(s: Solver, node: Node, value: JSONValue) -> Iterator[JSONValue]:
        n = node.schema[key]
        if isinstance(value, list):
            grown = _grow_array(s, node, value, n + 1)
            if grown is not MISSING:
                yield grown
        elif isinstance(value, dict):
            grown = _grow_object(s, node, value, n + 1)
            if grown is not MISSING:
                yield grown
        yield from _resolve(s, node, (key,), {floor: n + 1})

    return handler


def _first(s: Solver, nodes: list[Node], ok: Callable[[JSONValue], bool]) -> MaybeJSON:
    """The first solved value that ``ok`` accepts (MISSING if none or unsatisfiable)."""
    try:
        return next((c for c in itertools.islice(s.solve(nodes, 1), 16) if ok(c)), MISSING)
    except Unsat:
        return MISSING


def _grow_array(s: Solver, node: Node, value: list[Any], size: int) -> MaybeJSON:
    if size > MAX_SIZE // 10:
        return MISSING
    out = list(value)
    unique = node.get("uniqueItems") is True
    used = {unique_key(v) for v in out}
    contains = node.child(node.schema["contains"]) if "contains" in node.schema else None
    while len(out) < size:
        pick = _first(s, [_position(node, len(out))], lambda c: (
            not (unique and unique_key(c) in used)
            and not (contains is not None and "maxContains" in node.schema and s.valid(contains, c))
        ))
        if pick is MISSING:
            return MISSING
        out.append(pick)
        used.add(unique_key(pick))
    return out


def _grow_object(s: Solver, node: Node, value: dict[str, Any], size: int,
                 banned: str | None = None) -> MaybeJSON:
    """``value`` with properties added up to ``size`` (never ``banned``)."""
    from conformbench.schemas.solver.object_handler import _extra_names, _View

    if size > MAX_SIZE // 10:
        return MISSING
    out = dict(value)
    taken = [*out, *([banned] if banned else [])]
    declared = [k for k in (node.get("properties") or {}) if k not in taken]
    names = itertools.chain(declared, _extra_names(s, [node], _View.of(s, [node]), taken))
    for name in names:
        if len(out) >= size:
            break
        if name in out or name == banned:
            continue
        got = s.first(value_nodes([node], name), 1)
        if got is not MISSING:
            out[name] = got
    return out if len(out) >= size else MISSING


def _position(node: Node, index: int) -> Node:
    sub = item_schema(node.schema, index)
    return node.child(True if sub is None else sub)


def _unique(s: Solver, node: Node, value: JSONValue) -> Iterator[JSONValue]:
    """A duplicate: copy one element over another, or append a copy of an
    element placed past prefixItems."""
    if not isinstance(value, list):
        return
    for i, item in enumerate(value):
        yield [*value, item]
        for j in range(len(value)):
            if j != i:
                yield [*value[:j], item, *value[j + 1:]]
    past = max(len(value), tuple_length(node.schema)) + 1
    grown = _grow_array(s, node, value, past)
    if isinstance(grown, list):
        yield [*grown, grown[-1]]


def _contains_matches(s: Solver, node: Node, value: list[Any]) -> list[int]:
    contains = node.child(node.schema["contains"])
    return [i for i, v in enumerate(value) if s.valid(contains, v)]


def _min_contains(s: Solver, node: Node, value: JSONValue) -> Iterator[JSONValue]:
    if not isinstance(value, list):
        return
    keep = node.schema["minContains"] - 1
    extra = _contains_matches(s, node, value)[keep:]
    yield [v for i, v in enumerate(value) if i not in extra]
    replaced = list(value)
    contains = node.child(node.schema["contains"])
    for i in extra:
        other = _first(s, [_position(node, i)], lambda c: not s.valid(contains, c))
        if other is MISSING:
            return
        replaced[i] = other
    yield replaced


def _max_contains(s: Solver, node: Node, value: JSONValue) -> Iterator[JSONValue]:
    """More matches than maxContains: turn misses into matches, or append."""
    if not isinstance(value, list):
        return
    want = node.schema["maxContains"] + 1
    matched = _contains_matches(s, node, value)
    contains = node.child(node.schema["contains"])
    unique = node.get("uniqueItems") is True
    for replace in (True, False):
        out, used = list(value), {unique_key(v) for v in value}

        def fresh(candidate: JSONValue, used: set[str] = used) -> bool:
            return not unique or unique_key(candidate) not in used

        slots = [i for i in range(len(out)) if i not in matched] if replace else []
        have = len(matched)
        while have < want:
            index = slots.pop() if slots else len(out)
            nodes = [_position(node, index), contains]
            pick = _first(s, nodes, fresh)
            if pick is MISSING:
                break
            out[index:index + 1] = [pick]
            used.add(unique_key(pick))
            have += 1
        if have >= want:
            yield out


def _required(s: Solver, node: Node, value: JSONValue) -> Iterator[JSONValue]:
    if not isinstance(value, dict):
        return
    name = next((n for n in node.schema["required"] if n in value), None)
    if name is None:
        return
    without = {k: v for k, v in value.items() if k != name}
    yield without
    grown = _grow_object(s, node, without, len(value), banned=name)
    if grown is not MISSING:
        yield grown


def _closed(s: Solver, node: Node, value: JSONValue) -> Iterator[JSONValue]:
    if not isinstance(value, dict):
        return
    from conformbench.schemas.words import word_pool

    declared = node.get("properties") or {}
    patterns = list(node.get("patternProperties") or {})
    for _ in range(8):
        name = s.rng.choice(word_pool().names)
        if name not in declared and name not in value and not any(matches(p, name) for p in patterns):
            break
    added = {**value, name: s.text(3, 12)}
    yield added
    yield from (d for d in _drop_optional(node, added, name))


def _dependent(s: Solver, node: Node, value: JSONValue) -> Iterator[JSONValue]:
    if not isinstance(value, dict):
        return
    for trigger, deps in node.schema["dependentRequired"].items():
        if not deps:
            continue
        out = dict(value)
        if trigger not in out:
            got = s.first(value_nodes([node], trigger), 1)
            if got is MISSING:
                continue
            out[trigger] = got
        out.pop(deps[0], None)
        yield out
        yield from (d for d in _drop_optional(node, out, trigger) if deps[0] not in d)
        grown = _grow_object(s, node, out, len(out) + 1, banned=deps[0])
        if grown is not MISSING:
            yield grown
        return


def _items_false(s: Solver, node: Node, value: JSONValue) -> Iterator[JSONValue]:
    """One element past prefixItems (``items: false`` closes the tuple)."""
    if not isinstance(value, list):
        return
    full = _grow_array(s, node, value, tuple_length(node.schema))
    if isinstance(full, list):
        yield [*full, s.text(3, 10)]
        yield [*full, 0]


def _not(keyword: str) -> Handler:
    return _resolving(keyword, lambda v: {"not": {keyword: v}})


def _swap(keyword: str, other: str, delta: int = 0) -> Handler:
    return _resolving(keyword, lambda v: {other: v + delta})


HANDLERS: dict[str, Handler] = {
    "type": _type,
    "enum": _not("enum"),
    "const": _not("const"),
    "multipleOf": _not("multipleOf"),
    "minimum": _swap("minimum", "exclusiveMaximum"),
    "maximum": _swap("maximum", "exclusiveMinimum"),
    "exclusiveMinimum": _swap("exclusiveMinimum", "maximum"),
    "exclusiveMaximum": _swap("exclusiveMaximum", "minimum"),
    "minLength": _swap("minLength", "maxLength", -1),
    "maxLength": _swap("maxLength", "minLength", 1),
    "pattern": _not("pattern"),
    "format": _not("format"),
    "items": _items_false,
    "contains": _resolving("contains", lambda v: {"not": {"contains": v}}, ("minContains", "maxContains")),
    "minContains": _min_contains,
    "maxContains": _max_contains,
    "minItems": _shorter("minItems", "maxItems"),
    "maxItems": _longer("maxItems", "minItems"),
    "uniqueItems": _unique,
    "required": _required,
    "additionalProperties": _closed,
    "minProperties": _shorter("minProperties", "maxProperties"),
    "maxProperties": _longer("maxProperties", "minProperties"),
    "dependentRequired": _dependent,
    "not": _resolving("not", lambda v: {"allOf": [v]}),
    "anyOf": _resolving("anyOf", lambda v: {"not": {"anyOf": v}}),
    "oneOf": _resolving("oneOf", lambda v: {"not": {"oneOf": v}}),
}
