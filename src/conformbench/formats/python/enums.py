"""``enum`` and ``const`` as ``Literal`` types, and where Python's ``==``
judges their values differently from JSON (``True == 1``)."""

from __future__ import annotations

from typing import Any

from conformbench.formats.python.expr import Expr
from conformbench.formats.python.refs import same
from conformbench.formats.python.source import literal
from conformbench.formats.python.typed import Rule, Typed

__all__ = ["equality_confuses", "literal_type"]


def equality_confuses(values: list[Any]) -> bool:
    """Whether == (Literal's test) would accept a value JSON tells apart:
    true for 1 or false for 0 when only one of the pair is allowed, or
    either inside an array or object value."""
    return _bool_number_clash(values) or any(_has_bool_or_unit(v) for v in values if isinstance(v, (list, dict)))


def literal_type(values: list[Any]) -> Typed:
    """``Literal[...]`` of the scalars, ``| None`` for null, and list/dict
    with a membership check for array and object values."""
    return _literal_type(_dedupe(values))


def _bool_number_clash(values: list[Any]) -> bool:
    """Literal matches with ==: true == 1 and false == 0 unless both are allowed."""
    for flag, number in ((True, 1), (False, 0)):
        has_flag = any(v is flag for v in values)
        has_number = any(not isinstance(v, bool) and isinstance(v, (int, float)) and v == number for v in values)
        if has_flag != has_number:
            return True
    return False


def _has_bool_or_unit(value: Any) -> bool:
    """An array or object holding true, false, 0 or 1 (== confuses them)."""
    if isinstance(value, list):
        return any(_has_bool_or_unit(v) for v in value)
    if isinstance(value, dict):
        return any(_has_bool_or_unit(v) for v in value.values())
    return isinstance(value, bool) or (isinstance(value, (int, float)) and value in (0, 1))


def _dedupe(values: list[Any]) -> list[Any]:
    out: list[Any] = []
    for v in values:
        if not any(same(v, o) or (type(v) is not bool and type(o) is not bool and v == o) for o in out):
            out.append(v)
    return out


def _literal_type(values: list[Any]) -> Typed:
    scalars = [v for v in values if v is not None and not isinstance(v, (list, dict))]
    composite = [v for v in values if isinstance(v, (list, dict))]
    nullable = any(v is None for v in values)
    known = frozenset(_json_type(v) for v in values)
    members = []
    if scalars:
        members.append(f"Literal[{', '.join(literal(v) for v in scalars)}]")
    classes = [c for c, t in (("list", list), ("dict", dict)) if any(isinstance(v, t) for v in composite)]
    members += classes
    if not members:
        return Typed("None", known=frozenset({"null"}), pyclass="None")
    rules: tuple[Rule, ...] = ()
    if composite:
        kinds = classes[0] if len(classes) == 1 else f"({', '.join(classes)})"
        options = literal(composite[0]) if len(composite) == 1 else f"({', '.join(literal(v) for v in composite)})"
        op = "!=" if len(composite) == 1 else "not in"
        rules = (Rule(lambda v, d: Expr(f"isinstance({v}, {kinds}) and {v} {op} {options}", 2),
                      "is not one of the allowed values"),)
    return Typed(" | ".join(members), (), nullable, rules, known)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


