"""Two-constraint violations: an instance that breaks exactly two keyword
occurrences of a schema (the paper's Listing 2 negative breaks two).

Built from the oracle's work: each one-keyword violation is the valid
instance with one edit, so the edit is read back as a patch (the JSON paths
where the violation differs from the valid instance), and two patches that
touch disjoint places are applied together. Edits that overlap are tried
one after the other: one edit replayed on the other's instance where the
places it names still exist (an element edit on an array that another edit
shortened). Two edits that replace the same value (a scalar root with
``minimum`` and ``multipleOf``) cannot be stacked at all; when both keywords
sit in one subschema, that value is re-solved with both keywords negated
(``{"not": {"minimum": 5}}``, ``{"not": {"multipleOf": 3}}``) instead. Either way the result is kept only when the validator reports
exactly the two occurrences, each at its own schema path, and nothing else;
edits that interact (an added property that breaks ``maxProperties``...) are
refused by that check.
"""

from __future__ import annotations

import copy
import enum
import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Final

from conformbench.jsontypes import JSONValue
from conformbench.schemas.case import InvalidInstance
from conformbench.schemas.solver.core import BudgetExceeded, Node, Solver, Unsat
from conformbench.schemas.solver.type_handlers import TYPE_HANDLERS
from conformbench.validator.schema_validator import SchemaValidator

__all__ = ["PairViolation", "Patch", "combine", "patch_of", "violate_two"]

Path = tuple[str | int, ...]


class _Deleted(enum.Enum):
    """Marks a patch that removes an object member (an enum member, so that
    ``value is DELETED`` narrows types)."""

    DELETED = enum.auto()

    def __repr__(self) -> str:
        return "DELETED"


DELETED: Final = _Deleted.DELETED


@dataclass(frozen=True)
class Patch:
    """Set (or, with DELETED, remove) the value at ``path``."""

    path: Path
    value: JSONValue | _Deleted


@dataclass(frozen=True)
class PairViolation:
    """An instance violating exactly the occurrences of ``first`` and
    ``second`` (in the order the oracle listed them)."""

    first: InvalidInstance
    second: InvalidInstance
    instance: JSONValue

    @property
    def keywords(self) -> tuple[str, str]:
        return (self.first.keyword, self.second.keyword)

    @property
    def schema_paths(self) -> tuple[str, str]:
        return (self.first.schema_path, self.second.schema_path)


def _same(a: Any, b: Any) -> bool:
    """JSON equality: 1, 1.0 and True are three different values here."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return bool(a == b)


def patch_of(valid: JSONValue, changed: JSONValue, path: Path = ()) -> list[Patch]:
    """The edits that turn ``valid`` into ``changed``: per object member and
    per element of equal-length arrays; anything else replaces the value."""
    if _same(valid, changed):
        return []
    if isinstance(valid, dict) and isinstance(changed, dict) and _same_order(valid, changed):
        out = [Patch((*path, k), DELETED) for k in valid if k not in changed]
        for key, value in changed.items():
            if key not in valid:
                out.append(Patch((*path, key), copy.deepcopy(value)))
            else:
                out += patch_of(valid[key], value, (*path, key))
        return out
    if isinstance(valid, list) and isinstance(changed, list) and len(valid) == len(changed):
        return [p for i, (a, b) in enumerate(zip(valid, changed)) for p in patch_of(a, b, (*path, i))]
    return [Patch(path, copy.deepcopy(changed))]


def _same_order(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """The members both objects keep are in the same order (so members can
    be patched one by one without reordering what the edit wrote)."""
    common = [k for k in a if k in b]
    return common == [k for k in b if k in a]


def _overlaps(a: Path, b: Path) -> bool:
    n = min(len(a), len(b))
    return a[:n] == b[:n]


def _apply(value: JSONValue, patch: Patch) -> JSONValue:
    if not patch.path:
        if patch.value is DELETED:
            raise ValueError("a patch cannot delete the whole value")
        return copy.deepcopy(patch.value)
    parent: Any = value
    for step in patch.path[:-1]:
        parent = parent[step]
    last = patch.path[-1]
    if patch.value is DELETED:
        del parent[last]
    else:
        parent[last] = copy.deepcopy(patch.value)
    return value


def combine(valid: JSONValue, first: JSONValue, second: JSONValue) -> JSONValue | None:
    """``valid`` with the edits of both ``first`` and ``second``; None when
    an edit is empty or the two touch the same place (one path a prefix of
    the other)."""
    a, b = patch_of(valid, first), patch_of(valid, second)
    if not a or not b or any(_overlaps(p.path, q.path) for p in a for q in b):
        return None
    out = copy.deepcopy(valid)
    for patch in (*a, *b):
        out = _apply(out, patch)
    return out


def _segments(pointer: str) -> list[str]:
    return [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]


def _subschema(schema: Any, segments: list[str]) -> Any:
    for seg in segments:
        if isinstance(schema, dict) and seg in schema:
            schema = schema[seg]
        elif isinstance(schema, list) and seg.isdigit() and int(seg) < len(schema):
            schema = schema[int(seg)]
        else:
            return None
    return schema


def _negated(sub: dict[str, Any], keywords: tuple[str, str]) -> dict[str, Any]:
    """``sub`` with both keywords replaced by their negations."""
    nots = []
    for kw in keywords:
        inner = {kw: sub[kw]}
        if kw in ("minContains", "maxContains") and "contains" in sub:
            inner["contains"] = sub["contains"]
        nots.append({"not": inner})
    out = {k: v for k, v in sub.items() if k not in keywords}
    out["allOf"] = [*(out.get("allOf") or []), *nots]
    return out


def _jointly(solver: Solver, valid: JSONValue, first: InvalidInstance,
             second: InvalidInstance) -> Iterator[JSONValue]:
    """Candidates where both edits replace one and the same value and both
    keywords sit in one subschema: that value re-solved with both negated."""
    a, b = patch_of(valid, first.instance), patch_of(valid, second.instance)
    if len(a) != 1 or len(b) != 1 or a[0].path != b[0].path:
        return
    where_a, where_b = _segments(first.schema_path)[:-1], _segments(second.schema_path)[:-1]
    sub = _subschema(solver.validator.schema, where_a)
    if where_a != where_b or not isinstance(sub, dict):
        return
    if first.keyword not in sub or second.keyword not in sub:
        return
    root = solver.root
    node = Node(_negated(sub, (first.keyword, second.keyword)), root.resolver, root.spec)
    solver.budget = 3000
    try:
        for value in itertools.islice(solver.solve([node], 1), 12):
            yield _apply(copy.deepcopy(valid), Patch(a[0].path, value))
    except (BudgetExceeded, Unsat, RecursionError):
        return


def _onto(base: JSONValue, patches: list[Patch]) -> JSONValue | None:
    """``patches`` applied to ``base`` where every place they name exists
    in it (a shortened array keeps its first elements...); else None."""
    out = copy.deepcopy(base)
    for patch in patches:
        if not patch.path:
            return None
        parent: Any = out
        try:
            for step in patch.path[:-1]:
                parent = parent[step]
            last = patch.path[-1]
            if isinstance(parent, list) and not (isinstance(last, int) and last < len(parent)):
                return None
            if isinstance(parent, dict) and patch.value is DELETED and last not in parent:
                return None
            if not isinstance(parent, (dict, list)):
                return None
        except (KeyError, IndexError, TypeError):
            return None
        out = _apply(out, patch)
    return out


def _candidates(solver: Solver, valid: JSONValue, first: InvalidInstance,
                second: InvalidInstance) -> Iterator[JSONValue]:
    """The two edits stacked on the valid instance; else one edit replayed
    on the other's instance (either way round); else a joint re-solve."""
    stacked = combine(valid, first.instance, second.instance)
    if stacked is not None:
        yield stacked
        return
    for base, other in ((first.instance, second.instance), (second.instance, first.instance)):
        edits = patch_of(valid, other)
        replayed = _onto(base, edits) if edits else None
        if replayed is not None:
            yield replayed
    yield from _jointly(solver, valid, first, second)


def violate_two(
    validator: SchemaValidator,
    valid: JSONValue,
    pairs: Iterable[tuple[InvalidInstance, InvalidInstance]],
    limit: int = 200,
) -> Iterator[PairViolation]:
    """Checked two-constraint violations from ``pairs`` of one-keyword
    violations (tried in the given order, at most ``limit`` of them); a pair
    of the same occurrence is skipped."""
    solver = Solver(validator, TYPE_HANDLERS)
    for tried, (first, second) in enumerate(pairs):
        if tried >= limit:
            return
        want = {(first.keyword, first.schema_path), (second.keyword, second.schema_path)}
        if len(want) < 2:
            continue
        for instance in _candidates(solver, valid, first, second):
            found = {(v.keyword, v.schema_path) for v in validator.violations(instance)}
            if found == want:
                yield PairViolation(first, second, instance)
                break
