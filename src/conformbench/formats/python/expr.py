"""Python boolean expressions with their precedence, and the small
expression forms the checks of generated models are made of."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from conformbench.formats.python.source import Imports, literal, regex_literal, string_literal

__all__ = [
    "FALSE", "TRUE", "Expr", "and_", "count_test", "declared_test", "equals_one_of", "has_all", "not_", "or_",
    "type_test",
]


@dataclass(frozen=True)
class Expr:
    """Python expression text and its precedence: 0 atom or comparison,
    1 ``not``, 2 ``and``, 3 ``or``, 4 conditional expression."""

    text: str
    level: int = 0

    def wrapped(self, limit: int) -> str:
        return f"({self.text})" if self.level > limit else self.text


TRUE = Expr("True")
FALSE = Expr("False")


def and_(*parts: Expr) -> Expr:
    kept = [p for p in parts if p != TRUE]
    if FALSE in kept:
        return FALSE
    if not kept:
        return TRUE
    if len(kept) == 1:
        return kept[0]
    return Expr(" and ".join(p.wrapped(2) for p in kept), 2)


def or_(*parts: Expr) -> Expr:
    kept = [p for p in parts if p != FALSE]
    if TRUE in kept:
        return TRUE
    if not kept:
        return FALSE
    if len(kept) == 1:
        return kept[0]
    return Expr(" or ".join(p.wrapped(3) for p in kept), 3)


def not_(part: Expr) -> Expr:
    if part == TRUE:
        return FALSE
    if part == FALSE:
        return TRUE
    if part.text.startswith("not ") and part.level == 1:
        return Expr(part.text[4:], 0 if part.text[4:].startswith("(") else 1)
    return Expr(f"not {part.wrapped(1)}", 1)


def type_test(types: list[str], var: str, known: frozenset[str] | None) -> Expr:
    """``var`` is a JSON value of one of ``types`` (1.0 is not an integer
    here, as for Pydantic's strict ``int``)."""
    wanted = set(types)
    if "number" in wanted:
        wanted.discard("integer")
    if known is not None and known <= wanted | ({"integer"} if "number" in wanted else set()):
        return TRUE
    if known == frozenset({"number"}) and wanted == {"integer"}:
        return Expr(f"{var} % 1 == 0")
    parts: list[Expr] = []
    classes = [c for t, c in (("boolean", "bool"), ("string", "str"), ("array", "list"), ("object", "dict"))
               if t in wanted]
    numeric = "int, float" if "number" in wanted else "int" if "integer" in wanted else ""
    if numeric and "boolean" in wanted:
        classes.append(numeric)
    elif numeric:
        single = numeric if numeric == "int" else f"({numeric})"
        parts.append(and_(Expr(f"isinstance({var}, {single})"), Expr(f"not isinstance({var}, bool)", 1)))
    if classes:
        inside = classes[0] if len(classes) == 1 and "," not in classes[0] else f"({', '.join(classes)})"
        parts.append(Expr(f"isinstance({var}, {inside})"))
    if "null" in wanted:
        parts.append(Expr(f"{var} is None"))
    return or_(*parts)


def has_all(names: list[str], var: str) -> Expr:
    if len(names) == 1:
        return Expr(f"{string_literal(names[0])} in {var}")
    return Expr(f"all(k in {var} for k in {literal(list(names))})")


def declared_test(names: list[str], patterns: list[str], var: str, imports: Imports) -> Expr:
    """``var`` (a property name) is declared or matches a pattern."""
    parts = []
    if names:
        parts.append(Expr(f"{var} in {literal(list(names))}") if len(names) > 1
                     else Expr(f"{var} == {string_literal(names[0])}"))
    for pattern in patterns:
        parts.append(Expr(f"{imports.use('re')}.search({regex_literal(pattern)}, {var})"))
    return or_(*parts)


def count_test(match: Expr, var: str, item: str, low: Any, high: Any) -> Expr:
    """Between ``low`` and ``high`` items of ``var`` satisfy ``match``."""
    low = low if isinstance(low, int) else 1
    counted = f"sum(1 for {item} in {var} if {match.wrapped(3)})"
    if isinstance(high, int):
        if low <= 0:
            return Expr(f"{counted} <= {high}")
        return Expr(f"{low} <= {counted} <= {high}")
    if low <= 0:
        return TRUE
    if low == 1:
        return Expr(f"any({match.wrapped(3)} for {item} in {var})")
    return Expr(f"{counted} >= {low}")


def equals_one_of(values: list[Any], var: str, known: frozenset[str] | None) -> Expr:
    """``var`` equals one of ``values`` as JSON compares (1 == 1.0, true != 1)."""
    strings = [v for v in values if isinstance(v, str)]
    numbers = [v for v in values if _number(v)]
    parts = []
    if strings:
        parts.append(_member(strings, var))
    if numbers:
        test = _member(numbers, var)
        numeric = known is not None and known <= {"integer", "number"}
        parts.append(test if numeric else and_(test, Expr(f"not isinstance({var}, bool)", 1)))
    for value in values:
        if isinstance(value, bool) or value is None:
            parts.append(Expr(f"{var} is {value!r}"))
        elif isinstance(value, (list, dict)):
            parts.append(Expr(f"{var} == {literal(value)}"))
    return or_(*parts)


def _member(values: list[Any], var: str) -> Expr:
    if len(values) == 1:
        return Expr(f"{var} == {literal(values[0])}")
    return Expr(f"{var} in ({', '.join(literal(v) for v in values)})")


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
