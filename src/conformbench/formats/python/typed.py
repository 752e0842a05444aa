"""Records of the Pydantic renderer: a rendered type (``Typed``), a check
that types cannot state (``Rule``), and a keyword the rendering does not
state exactly (``InexactKeyword``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from conformbench.formats.python.expr import TRUE, Expr, and_, type_test

__all__ = [
    "ANY", "InexactKeyword", "Rule", "Typed", "always", "at_index", "for_each", "for_member", "loop_var",
    "union", "when_not_none",
]


@dataclass(frozen=True)
class InexactKeyword:
    """A keyword occurrence whose Pydantic rendering accepts or rejects
    values differently from the JSON Schema (``schema_path`` is a JSON
    pointer to the keyword, as in the dataset's invalid instances)."""

    keyword: str
    schema_path: str
    reason: str


@dataclass(frozen=True)
class Rule:
    """A check on a validated value: ``bad(var, depth)`` is true when the
    schema rejects the value (``depth`` picks fresh loop variables)."""

    bad: Callable[[str, int], Expr]
    message: str


def loop_var(depth: int) -> str:
    return ("x", "y", "z", "w")[depth] if depth < 4 else f"x{depth}"


@dataclass(frozen=True)
class Typed:
    """A rendered type: ``base`` with ``Field(*args)`` constraints, ``| None``
    when ``nullable``, and ``rules`` checked by a validator.

    ``known`` is the set of JSON types a validated value has (None: any);
    ``raw`` says whether the validated value is the parsed JSON value (so
    expression tests apply to it), and ``pyclass`` is the class to tell it
    apart from other members of a union."""

    base: str
    args: tuple[str, ...] = ()
    nullable: bool = False
    rules: tuple[Rule, ...] = ()
    known: frozenset[str] | None = None
    raw: bool = True
    pyclass: str | None = None
    forward: bool = False
    #: a union member list (flattened into parent unions)
    members: tuple[Typed, ...] = field(default=(), compare=False)

    def inner(self) -> str:
        return f"Annotated[{self.base}, Field({', '.join(self.args)})]" if self.args else self.base

    def annotation(self) -> str:
        text = self.inner()
        return f"{text} | None" if self.nullable and self.base != "Any" else text

    def with_rules(self, *rules: Rule) -> Typed:
        return replace(self, rules=(*self.rules, *rules))

    def value_rules(self) -> tuple[Rule, ...]:
        """Rules for a value of this type that may also be None."""
        if not self.nullable or not self.rules:
            return self.rules
        return tuple(when_not_none(r) for r in self.rules)


ANY = Typed("Any")


def union(members: list[Typed]) -> Typed | None:
    """One type accepting what any member accepts; None when a member's
    rules cannot be told apart from another member's values."""
    flat: list[Typed] = []
    nullable = False
    for m in members:
        for part in m.members or (m,):
            nullable = nullable or part.nullable or part.base == "None"
            if part.base != "None" and part.inner() not in [f.inner() for f in flat]:
                flat.append(replace(part, nullable=False))
    if any(m.base == "Any" and not m.rules for m in flat):
        return Typed("Any", nullable=False)
    if not flat:
        return Typed("None", known=frozenset({"null"}), pyclass="None")
    if len(flat) == 1:
        return replace(flat[0], nullable=nullable, members=())
    rules = _union_rules(flat)
    if rules is None:
        return None
    known = frozenset().union(*(m.known or frozenset() for m in flat)) if all(m.known for m in flat) else None
    return Typed(
        " | ".join(m.inner() for m in flat), (), nullable, rules, known,
        raw=all(m.raw for m in flat), forward=any(m.forward for m in flat), members=tuple(flat),
    )


def _union_rules(members: list[Typed]) -> tuple[Rule, ...] | None:
    out: list[Rule] = []
    for m in members:
        if not m.rules:
            continue
        others = [o for o in members if o is not m]
        if m.known is None or any(o.known is None or o.known & m.known for o in others):
            return None
        if not m.raw and m.pyclass is None:
            return None
        out += [for_member(r, m) for r in m.rules]
    return tuple(out)


def _is_member(m: Typed, var: str) -> Expr:
    if m.raw and m.known is not None:
        return type_test(sorted(m.known), var, None)
    return Expr(f"isinstance({var}, {m.pyclass})")


def always(message: str) -> Rule:
    return Rule(lambda v, d: TRUE, message)


# -- rules of a part, stated on the whole (closures, not default arguments)


def when_not_none(rule: Rule) -> Rule:
    def bad(var: str, depth: int) -> Expr:
        return and_(Expr(f"{var} is not None"), rule.bad(var, depth))
    return Rule(bad, rule.message)


def for_member(rule: Rule, member: Typed) -> Rule:
    """``rule`` of one union member, for values of that member."""
    def bad(var: str, depth: int) -> Expr:
        return and_(_is_member(member, var), rule.bad(var, depth))
    return Rule(bad, rule.message)


def for_each(rule: Rule, values: str = "") -> Rule:
    """``rule`` of an item (or, with values=".values()", of a dict value)."""
    def bad(var: str, depth: int) -> Expr:
        item = loop_var(depth)
        return Expr(f"any({rule.bad(item, depth + 1).wrapped(3)} for {item} in {var}{values})")
    return Rule(bad, rule.message)


def at_index(rule: Rule, index: int) -> Rule:
    def bad(var: str, depth: int) -> Expr:
        return rule.bad(f"{var}[{index}]", depth)
    return Rule(bad, rule.message)
