"""Shapes: what a grammar can state about each position of a JSON value,
read from a JSON Schema once and rendered by the YAML and XML compilers.

A shape holds the JSON types allowed at a position, enum/const choices,
and the string, number, object and array rules a grammar can express.
Every keyword occurrence it cannot express is recorded as an
``UnenforcedKeyword`` (keyword, schema path, reason): the grammar then
accepts more than the schema (never less), and the validator checks the
rest, as for every JSON engine.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from conformbench.jsontypes import JSONValue

__all__ = [
    "ALL_KINDS",
    "ArrayRule",
    "Bound",
    "KeyClass",
    "Member",
    "NumberRule",
    "ObjectRule",
    "Shape",
    "StringRule",
    "UnenforcedKeyword",
]

#: JSON types a shape may allow ("number" includes the integers; a shape
#: never holds both "number" and "integer")
ALL_KINDS = frozenset({"null", "boolean", "integer", "number", "string", "array", "object"})


@dataclass(frozen=True)
class UnenforcedKeyword:
    """A keyword occurrence the grammar does not state (left to the validator)."""

    keyword: str
    schema_path: str
    reason: str


@dataclass(frozen=True)
class Bound:
    value: Decimal
    exclusive: bool


@dataclass(frozen=True)
class StringRule:
    min_length: int = 0
    max_length: int | None = None
    #: regexes every value matches (translated ``pattern``, ``format``), whole-value semantics
    regexes: tuple[str, ...] = ()
    #: whether the empty string satisfies the rule
    empty_ok: bool = True


@dataclass(frozen=True)
class NumberRule:
    lower: Bound | None = None
    upper: Bound | None = None
    #: a multipleOf the grammar states (see numbers.stated_step)
    step: Decimal | None = None


@dataclass(eq=False)
class Member:
    """A declared property, in schema order."""

    name: str
    shape: Shape
    required: bool


@dataclass(eq=False)
class KeyClass:
    """Undeclared keys a grammar lets in: those matching ``pattern`` (None:
    any key) and none of ``excluded`` (regexes over the key), with values of
    ``shape``. Declared names are always excluded."""

    pattern: str | None
    excluded: tuple[str, ...]
    shape: Shape


@dataclass(eq=False)
class ObjectRule:
    members: list[Member] = field(default_factory=list)
    extras: list[KeyClass] = field(default_factory=list)
    min_props: int = 0
    max_props: int | None = None
    #: dependentRequired among declared names: (trigger, names it requires)
    dependent: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def declared(self) -> list[str]:
        return [m.name for m in self.members]


@dataclass(eq=False)
class ArrayRule:
    prefix: list[Shape] = field(default_factory=list)
    #: items after the prefix; None when there may be none (``items: false``)
    items: Shape | None = None
    min_items: int = 0
    max_items: int | None = None


@dataclass(eq=False)
class Shape:
    """What a value at one position may be. Identity-hashed: compilers key
    their rules on the shape object."""

    kinds: frozenset[str] = ALL_KINDS
    #: enum/const values that satisfy the whole subschema (None: no enum/const)
    choices: tuple[JSONValue, ...] | None = None
    string: StringRule = field(default_factory=StringRule)
    number: NumberRule = field(default_factory=NumberRule)
    obj: ObjectRule = field(default_factory=ObjectRule)
    array: ArrayRule = field(default_factory=ArrayRule)
    #: the subschemas that apply here, as the XML reader's guide sees them
    guide: tuple[Any, ...] = ()
    #: True for the shape of ``{}`` / ``true``: any value at all
    anything: bool = False

    @property
    def integer(self) -> bool:
        return "integer" in self.kinds
