"""Where a schema's constraint keywords occur, named the way the validator
names them in its errors.

The walk follows the applicators whose inner errors keep their own schema
paths (properties, patternProperties, additionalProperties, items,
prefixItems, additionalItems, allOf) and local references: real-world schemas keep most of
their constraints in ``definitions``/``$defs``. python-jsonschema leaves
``$ref`` out of schema paths (the target reads as if written in place), so
an occurrence's ``path`` marks the crossing with a ``$ref`` segment, which
``_descend`` in ``mutate`` follows and ``schema_path`` leaves out. Each
reference target is walked once, at its first use in document order: one
occurrence per constraint written, and no endless walk through a recursive
schema.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from conformbench.schemas.solver.core import Node, Solver
from conformbench.validator.schema_validator import json_pointer

__all__ = ["Occurrence", "occurrences"]

#: applicators whose next path segment is a name or an index
_NAMED = ("properties", "patternProperties", "prefixItems", "allOf")


@dataclass(frozen=True)
class Occurrence:
    keyword: str
    #: segments from the root to the subschema that holds the keyword;
    #: "$ref" in a keyword position crosses a reference
    path: tuple[str, ...]

    @property
    def schema_path(self) -> str:
        """The validator's schema path of this keyword (references left out)."""
        out: list[str] = []
        named = False
        for segment in self.path:
            if named:
                out.append(segment)
                named = False
            elif segment != "$ref":
                out.append(segment)
                named = segment in _NAMED
        return json_pointer([*out, self.keyword])


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


@dataclass
class _Walk:
    solver: Solver
    found: list[Occurrence] = field(default_factory=list)
    #: schema paths listed already (a target keyword that a sibling of its
    #: $ref repeats would read as the same occurrence)
    paths: set[str] = field(default_factory=set)
    #: reference targets walked already, by identity
    expanded: set[int] = field(default_factory=set)

    def visit(self, node: Node, path: tuple[str, ...]) -> None:
        schema = node.schema
        if not isinstance(schema, dict):
            return
        for key, value in schema.items():
            if _violable(key, value, schema):
                occ = Occurrence(key, path)
                if occ.schema_path not in self.paths:
                    self.paths.add(occ.schema_path)
                    self.found.append(occ)
        for key, sub in schema.items():
            self._into(node, key, sub, path)

    def _into(self, node: Node, key: str, sub: Any, path: tuple[str, ...]) -> None:
        if key in ("properties", "patternProperties") and isinstance(sub, dict):
            for name, child in sub.items():
                self.visit(node.child(child), (*path, key, name))
        elif key in ("additionalProperties", "items", "additionalItems") and isinstance(sub, dict):
            self.visit(node.child(sub), (*path, key))
        elif key in ("prefixItems", "allOf", "items") and isinstance(sub, list):
            for i, child in enumerate(sub):
                self.visit(node.child(child), (*path, key, str(i)))
        elif key == "$ref" and isinstance(sub, str):
            target = self.solver.lookup(node, sub)
            if isinstance(target.schema, dict) and id(target.schema) not in self.expanded:
                self.expanded.add(id(target.schema))
                self.visit(target, (*path, "$ref"))


def occurrences(solver: Solver) -> list[Occurrence]:
    """Violable keyword occurrences of the solver's schema, in document order."""
    walk = _Walk(solver)
    walk.visit(solver.root, ())
    return walk.found
