"""The constructive core of the instance oracle.

``Solver.solve(nodes)`` yields values valid against every schema node of a
conjunction. A conjunction is first flattened (``$ref``/``$dynamicRef``
targets and ``allOf`` members join it; ``anyOf``/``oneOf``/``if`` open
alternatives), then each alternative's JSON types are tried in turn by the
small per-type handlers the solver is given (``type_handlers.TYPE_HANDLERS``:
they call back into the solver for members and items). Every value is
checked with the ground-truth validator before it is yielded, so the
handlers may be heuristic; only contradictions found structurally (a false
schema, disjoint types, an empty range) count as proof of unsatisfiability.
"""

from __future__ import annotations

import enum
import hashlib
import json
import random
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final, TypeAlias

import referencing.exceptions

from conformbench.jsontypes import JSONValue
from conformbench.validator.schema_validator import SchemaValidator

__all__ = [
    "ALL_TYPES",
    "MISSING",
    "BudgetExceeded",
    "MaybeJSON",
    "Node",
    "Solver",
    "TypeHandler",
    "Unsat",
    "item_schema",
    "naturals",
    "tuple_length",
]

ALL_TYPES = ("string", "integer", "number", "boolean", "null", "object", "array")
_HINTS = {
    "object": ("properties", "required", "additionalProperties", "patternProperties",
               "minProperties", "maxProperties", "dependentRequired", "propertyNames",
               "dependentSchemas", "unevaluatedProperties"),
    "array": ("items", "prefixItems", "contains", "minItems", "maxItems", "uniqueItems",
              "minContains", "maxContains", "unevaluatedItems"),
    "string": ("minLength", "maxLength", "pattern", "format"),
    "number": ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"),
}
_MAX_DEPTH = 14
#: the longest string and the most items/properties the solver builds
#: (a hostile minLength of 10^9 is given up on, not allocated)
MAX_SIZE = 10_000
_MAX_COMBOS = 48
#: search steps allowed per validation of the budget (see Solver.steps)
_STEPS_PER_CHECK = 1000


class Unsat(Exception):
    """A structural contradiction: no instance can satisfy these nodes."""


class BudgetExceeded(Exception):
    """The search spent its validation budget."""


@dataclass(frozen=True)
class Node:
    """A schema (dict or bool) with the resolver of its scope and its draft."""

    schema: Any
    resolver: Any
    spec: Any

    def get(self, key: str, default: Any = None) -> Any:
        return self.schema.get(key, default) if isinstance(self.schema, dict) else default

    def child(self, sub: Any) -> Node:
        """A subschema, scoped the way jsonschema's ``descend`` scopes it."""
        if not isinstance(sub, dict):
            return Node(sub, self.resolver, self.spec)
        resource = self.spec.create_resource(sub)
        return Node(sub, self.resolver.in_subresource(resource), self.spec)


#: the candidates of one JSON type for a conjunction (solver, nodes, depth, type name)
TypeHandler: TypeAlias = "Callable[[Solver, list[Node], int, str], Iterator[JSONValue]]"


class Solver:
    """One search over one schema document; deterministic for the document.
    ``handlers`` gives the candidates of each JSON type (all seven)."""

    def __init__(self, validator: SchemaValidator, handlers: Mapping[str, TypeHandler], budget: int = 6000,
                 steps: int | None = None) -> None:
        self.validator = validator
        self.handlers = handlers
        digest = hashlib.sha256(
            json.dumps(validator.schema, sort_keys=True, ensure_ascii=False).encode()
        ).digest()
        self.rng = random.Random(int.from_bytes(digest[:8], "big"))
        self.budget = budget
        #: search steps (schema nodes visited) left: the validation budget
        #: alone does not bound the search when a conjunction gathers
        #: hundreds of nodes (large real-world schemas), each candidate then
        #: costing far more work than one validation
        self.steps = _STEPS_PER_CHECK * budget if steps is None else steps
        self.incomplete: list[str] = []
        self._checkers: dict[tuple[int, int], tuple[Node, Callable[[JSONValue], bool]]] = {}

    @property
    def root(self) -> Node:
        return Node(self.validator.schema, self.validator.root_resolver, self.validator.specification)

    def note(self, reason: str) -> None:
        """Record a heuristic failure: the search is no longer a proof."""
        if reason not in self.incomplete:
            self.incomplete.append(reason)

    def reset(self, budget: int, steps: int) -> None:
        """A fresh budget: validations, and search steps."""
        self.budget = budget
        self.steps = steps

    def charge(self, steps: int) -> None:
        """Count search work; BudgetExceeded once the steps are spent."""
        self.steps -= steps
        if self.steps < 0:
            raise BudgetExceeded

    def valid(self, node: Node, value: JSONValue) -> bool:
        if node.schema is True or node.schema == {}:
            return True
        if node.schema is False:
            return False
        self.budget -= 1
        if self.budget < 0:
            raise BudgetExceeded
        key = (id(node.schema), id(node.resolver))
        if key not in self._checkers:
            self._checkers[key] = (node, self.validator.subschema_checker(node.schema, node.resolver))
        return self._checkers[key][1](value)

    def first(self, nodes: list[Node], depth: int) -> MaybeJSON:
        """The first value valid for ``nodes``, or MISSING."""
        for value in self.solve(nodes, depth):
            return value
        return MISSING

    def solve(self, nodes: list[Node], depth: int = 0) -> Iterator[JSONValue]:
        """Values valid against every node; raises Unsat on proof that none exists."""
        if depth > _MAX_DEPTH:
            self.note("nesting deeper than the solver follows")
            return
        reasons: list[str] = []
        proved = True
        for count, flat in enumerate(self._alternatives(nodes)):
            if count >= _MAX_COMBOS:
                self.note("too many anyOf/oneOf/if alternatives")
                proved = False
                break
            if isinstance(flat, Unsat):
                reasons.append(str(flat))
                continue
            self.charge(len(flat))
            try:
                found = False
                for value in self._typed(flat, depth):
                    if all(self.valid(n, value) for n in nodes):
                        found = True
                        yield value
                if not found:
                    proved = False
            except Unsat as exc:
                reasons.append(str(exc))
        if reasons and proved:
            raise Unsat(reasons[0])
        if reasons:
            self.note(reasons[0])

    # -- flattening -------------------------------------------------------

    def _alternatives(self, nodes: list[Node]) -> Iterator[list[Node] | Unsat]:
        """Branch-free conjunctions equivalent (after validation) to ``nodes``."""
        return self._extend([], [], nodes)

    def _extend(
        self, flat: list[Node], branches: list[list[list[Node]]], nodes: list[Node]
    ) -> Iterator[list[Node] | Unsat]:
        """The conjunctions of ``flat`` and ``branches`` with ``nodes`` added
        (copies: the caller's lists stay as they are), or the Unsat that
        adding them raised."""
        more, rest = list(flat), list(branches)
        try:
            for node in nodes:
                self._flatten(node, more, rest, 0)
        except Unsat as exc:
            yield exc
            return
        yield from self._expand(more, rest)

    def _expand(
        self, flat: list[Node], branches: list[list[list[Node]]]
    ) -> Iterator[list[Node] | Unsat]:
        if not branches:
            yield flat
            return
        for alternative in branches[0]:
            yield from self._extend(flat, branches[1:], alternative)

    def _flatten(
        self, node: Node, flat: list[Node], branches: list[list[list[Node]]], hops: int
    ) -> None:
        schema = node.schema
        if schema is True or schema == {}:
            return
        if schema is False:
            raise Unsat("the schema is false")
        if not isinstance(schema, dict) or any(n.schema is schema for n in flat):
            return
        if hops > 24:
            self.note("$ref chain too long")
            return
        flat.append(node)
        for key in ("$ref", "$dynamicRef"):
            if isinstance(schema.get(key), str):
                self._flatten(self.lookup(node, schema[key]), flat, branches, hops + 1)
        for sub in schema.get("allOf", ()):
            self._flatten(node.child(sub), flat, branches, hops + 1)
        for key in ("anyOf", "oneOf"):
            if isinstance(schema.get(key), list):
                branches.append([[node.child(s)] for s in schema[key]])
        if "if" in schema:
            then = [node.child(schema["if"])] + ([node.child(schema["then"])] if "then" in schema else [])
            other = [node.child(schema["else"])] if "else" in schema else []
            branches.append([then, other])

    def lookup(self, node: Node, ref: str) -> Node:
        """The node a reference of ``node`` points to (``true`` where it
        resolves nowhere, noted: the search is then no proof)."""
        try:
            resolved = node.resolver.lookup(ref)
        except referencing.exceptions.Unresolvable:
            self.note(f"unresolvable $ref {ref!r}")
            return Node(True, node.resolver, node.spec)
        return Node(resolved.contents, resolved.resolver, node.spec)

    # -- typed candidates -------------------------------------------------

    def _typed(self, flat: list[Node], depth: int) -> Iterator[JSONValue]:
        listed = [n.schema[k] for n in flat for k in ("const",) if k in n.schema]
        enums = [n.schema["enum"] for n in flat if isinstance(n.schema.get("enum"), list)]
        if listed or enums:
            values = [listed[0]] if listed else list(enums[0])
            valid = [v for v in values if all(self.valid(n, v) for n in flat)]
            if not valid:
                raise Unsat("no enum/const value satisfies every constraint")
            yield from valid
            return
        for kind in self._types(flat):
            yield from self.handlers[kind](self, flat, depth, kind)

    def _types(self, flat: list[Node]) -> list[str]:
        allowed = set(ALL_TYPES)
        order: list[str] = []
        for node in flat:
            declared = node.schema.get("type")
            if declared is None:
                continue
            names = [declared] if isinstance(declared, str) else list(declared)
            here = set(names) | ({"integer"} if "number" in names else set())
            allowed &= here
            order.extend(t for t in names if t not in order)
        if not allowed:
            raise Unsat("no JSON type satisfies every 'type'")
        hinted = [t for t, keys in _HINTS.items() if any(k in n.schema for n in flat for k in keys)]
        if "number" in hinted:
            hinted.insert(hinted.index("number"), "integer")
        ranked = [t for t in [*order, *hinted, *ALL_TYPES] if t in allowed]
        return list(dict.fromkeys(ranked))

    def text(self, low: int, high: int) -> str:
        """Lorem text with a length in [low, high]."""
        from conformbench.schemas.words import lorem_text

        return lorem_text(self.rng, low, max(low, high))

    def nodes_for(self, flat: list[Node], key: str) -> list[Node]:
        """The subschemas under ``key`` of every node, in scope."""
        return [n.child(n.schema[key]) for n in flat if key in n.schema]

    def values(self, flat: list[Node], key: str) -> list[Any]:
        return [n.schema[key] for n in flat if key in n.schema]


class _Missing(enum.Enum):
    """The "no value" marker; an enum member so that ``x is MISSING`` narrows types."""

    MISSING = enum.auto()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing.MISSING
#: a JSON value, or MISSING where none was found
MaybeJSON: TypeAlias = "JSONValue | _Missing"


def tuple_length(schema: Any) -> int:
    """How many leading array positions have their own subschema:
    ``prefixItems`` (2020-12) or ``items`` written as a list (earlier drafts)."""
    if not isinstance(schema, dict):
        return 0
    for key in ("items", "prefixItems"):
        if isinstance(schema.get(key), list):
            return len(schema[key])
    return 0


def item_schema(schema: Any, index: int) -> Any:
    """The subschema for array position ``index`` (None: unconstrained):
    prefixItems then items (2020-12), or a list of items then
    additionalItems (earlier drafts, where ``items`` may be a list)."""
    if not isinstance(schema, dict):
        return None
    items = schema.get("items")
    if isinstance(items, list):
        return items[index] if index < len(items) else schema.get("additionalItems")
    prefix = schema.get("prefixItems")
    if isinstance(prefix, list) and index < len(prefix):
        return prefix[index]
    return items


def naturals(s: Solver, flat: list[Node], key: str) -> list[int]:
    """The integer values of ``key`` across the conjunction."""
    return [v for v in s.values(flat, key) if isinstance(v, int) and not isinstance(v, bool)]
