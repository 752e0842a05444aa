"""Objects and arrays, shared by the YAML and XML compilers: reading the
object keywords of a schema, and the rule chains that order members and
items.

Declared members come in schema order (property order is part of the
contract), each present or absent; undeclared keys come after them. The
chain tracks how many entries were written (``minProperties``,
``maxProperties``) and which declared names are present
(``dependentRequired``), so those keywords are stated exactly. Arrays are
the prefix items in order, then the ``items`` repeated within
``minItems``/``maxItems``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable
from typing import Any, Protocol

from conformbench.engines.grammars.lark_writer import EMPTY, LarkBuilder, seq
from conformbench.engines.grammars.shapes import ArrayRule, KeyClass, Member, ObjectRule, Shape
from conformbench.engines.grammars.strings import pattern_regex, regex_ok
from conformbench.errors import UnsupportedSchemaError
from conformbench.formats.xml.guide import Guide, property_guide
from conformbench.validator.pattern_size import PatternTooLarge, check_size

__all__ = ["ShapeReader", "array_body", "object_body", "read_object", "repeat"]


class ShapeReader(Protocol):
    """The schema reader (read.py) as the object keywords use it: it reads
    member schemas into shapes and collects what stays unenforced."""

    def note(self, keyword: str, path: str, reason: str) -> None:
        """Record ``keyword`` at ``path`` as unenforced, with ``reason``."""

    def shape(self, schema: Any, path: str, guide: Guide) -> Shape | None:
        """The shape of ``schema``; None when no value is valid."""


def _pointer(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")


def _search(pattern: str, name: str) -> bool:
    try:
        check_size(pattern)
        return re.search(pattern, name) is not None
    except (re.error, PatternTooLarge):
        return False


def _key_classes(reader: ShapeReader, schema: dict[str, Any], path: str) -> list[KeyClass]:
    patterns = schema.get("patternProperties")
    patterns = patterns if isinstance(patterns, dict) else {}
    translated: list[str | None] = []
    for pattern in patterns:
        regex = pattern_regex(pattern)
        if regex is None or not regex_ok(regex):
            reader.note("patternProperties", path, f"key pattern {pattern!r} cannot be translated: any key is let in")
            regex = None
        translated.append(regex)
    known = tuple(r for r in translated if r is not None)
    classes = []
    for (pattern, sub), regex in zip(patterns.items(), translated):
        shape = reader.shape(sub, f"{path}/patternProperties/{_pointer(pattern)}", (sub,))
        if shape is not None:
            classes.append(KeyClass(regex, tuple(r for r in known if r != regex), shape))
    additional = schema.get("additionalProperties", True)
    guide = (additional,) if "additionalProperties" in schema else ()
    shape = reader.shape(additional, f"{path}/additionalProperties", guide)
    if shape is not None:
        classes.append(KeyClass(None, known, shape))
    return classes


def _undeclared_member(reader: ShapeReader, schema: dict[str, Any], path: str, name: str) -> Shape:
    """The shape of a required name that ``properties`` does not declare."""
    for pattern, sub in (schema.get("patternProperties") or {}).items():
        if _search(pattern, name):
            shape = reader.shape(sub, f"{path}/patternProperties/{_pointer(pattern)}", (sub,))
            if shape is None:
                break
            return shape
    else:
        additional = schema.get("additionalProperties", True)
        shape = reader.shape(additional, f"{path}/additionalProperties", (additional,))
        if shape is not None:
            return shape
    raise UnsupportedSchemaError("grammar", f"required property {name!r} at {path or '/'} is forbidden")


def read_object(reader: ShapeReader, schema: dict[str, Any], path: str, guide: Guide) -> ObjectRule:
    props = schema.get("properties")
    props = props if isinstance(props, dict) else {}
    required = [r for r in schema.get("required") or [] if isinstance(r, str)]
    members: list[Member] = []
    for name, sub in props.items():
        if any(_search(p, name) for p in schema.get("patternProperties") or {}):
            reader.note("patternProperties", path, f"declared name {name!r} also matches a key pattern")
        shape = reader.shape(sub, f"{path}/properties/{_pointer(name)}", property_guide(guide, name))
        if shape is None:
            if name in required:
                raise UnsupportedSchemaError("grammar", f"required property {name!r} at {path or '/'} is false")
            continue
        members.append(Member(name, shape, name in required))
    declared = {m.name for m in members}
    for name in dict.fromkeys(required):
        if name not in declared and name not in props:
            members.append(Member(name, _undeclared_member(reader, schema, path, name), True))
            declared.add(name)
    dependent = []
    for trigger, needs in (schema.get("dependentRequired") or {}).items():
        if trigger in declared and all(n in declared for n in needs):
            dependent.append((trigger, tuple(needs)))
        else:
            reader.note("dependentRequired", path, f"{trigger!r} or what it requires is not a declared property")
    low, high = schema.get("minProperties", 0), schema.get("maxProperties")
    return ObjectRule(
        members, _key_classes(reader, schema, path), low if isinstance(low, int) else 0,
        high if isinstance(high, int) else None, tuple(dependent),
    )


def repeat(expr: str | None, low: int, high: int | None) -> str | None:
    """``expr`` written ``low`` to ``high`` times (None: no upper limit)."""
    if high is not None and high < low:
        return None
    if high == 0:
        return EMPTY
    if expr is None:
        return EMPTY if low == 0 else None
    if low == high == 1:
        return expr
    top = "" if high is None else str(high)
    return f"({expr}){{{low},{top}}}"


#: member(i, first) / extra(first): the Lark text of one entry; ``first``
#: when no entry precedes it in the object
MemberText = Callable[[int, bool], str | None]
ExtraText = Callable[[bool], str | None]


def object_body(
    b: LarkBuilder, key: Hashable, rule: ObjectRule, member: MemberText, extra: ExtraText | None, need_one: bool
) -> str | None:
    """The rule of an object's entries; ``need_one``: at least one entry."""
    counting = rule.min_props > 0 or rule.max_props is not None
    relevant = {name for trigger, needs in rule.dependent for name in (trigger, *needs)}
    members = rule.members

    def tail(count: int, present: frozenset[str], started: bool) -> str | None:
        if any(t in present and not set(needs) <= present for t, needs in rule.dependent):
            return None
        low = max(0, rule.min_props - count)
        high = None if rule.max_props is None else rule.max_props - count
        if need_one and not started:
            low = max(low, 1)
        if extra is None or not rule.extras:
            return EMPTY if low == 0 else None
        if started:
            return repeat(extra(False), low, high)
        rest = repeat(extra(False), max(low - 1, 0), None if high is None else high - 1)
        first = seq(extra(True), rest) if high != 0 else None
        return b.rule((key, "extras", low, high), lambda: [first, EMPTY if low == 0 else None])

    def state(i: int, count: int, present: frozenset[str], started: bool) -> str | None:
        return b.rule((key, "entries", i, count, present, started), lambda: step(i, count, present, started))

    def step(i: int, count: int, present: frozenset[str], started: bool) -> list[str | None]:
        if i == len(members):
            return [tail(count, present, started)]
        m = members[i]
        alts: list[str | None] = []
        if rule.max_props is None or count < rule.max_props:
            now = present | {m.name} if m.name in relevant else present
            alts.append(seq(member(i, not started), state(i + 1, count + 1 if counting else 0, now, True)))
        must = m.required or any(t in present and m.name in needs for t, needs in rule.dependent)
        if not must:
            alts.append(state(i + 1, count, present, started))
        return alts

    return state(0, 0, frozenset(), False)


#: element(shape, first): the Lark text of one array element
ElementText = Callable[[Shape, bool], str | None]


def array_body(b: LarkBuilder, key: Hashable, rule: ArrayRule, element: ElementText) -> str | None:
    """The rule of a non-empty array's elements."""
    prefix, top = rule.prefix, rule.max_items

    def chain(i: int) -> str | None:
        return b.rule((key, "items", i), lambda: link(i))

    def link(i: int) -> list[str | None]:
        if i < len(prefix):
            alts = [EMPTY if i >= max(rule.min_items, 1) else None]
            if top is None or i < top:
                alts.append(seq(element(prefix[i], i == 0), chain(i + 1)))
            return alts
        if rule.items is None:
            return [EMPTY if i >= max(rule.min_items, 1) else None]
        more = repeat(element(rule.items, False), max(rule.min_items - i - (i == 0), 0),
                      None if top is None else top - i - (i == 0))
        if i > 0:
            return [more]
        return [seq(element(rule.items, True), more)] if top is None or top > 0 else []

    return chain(0)
