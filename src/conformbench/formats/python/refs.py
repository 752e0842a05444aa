"""Local references and ``allOf`` for the Pydantic renderer.

``Resolver`` follows ``$ref`` inside the schema document (JSON pointers,
``$anchor`` names, ``#`` for the root). ``merge`` folds the subschemas of an
``allOf`` into one schema where the keywords combine (bounds tighten,
property sets unite, types intersect); what does not combine is returned as
leftover subschemas, which the renderer states as checks.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import Any
from urllib.parse import unquote

from jsonschema.validators import (
    Draft4Validator,
    Draft6Validator,
    Draft7Validator,
    Draft201909Validator,
    Draft202012Validator,
    validator_for,
)

__all__ = ["ANNOTATIONS", "Dialect", "Resolver", "expand", "merge", "same"]

#: keywords that never change which values are valid
ANNOTATIONS = frozenset({
    "title", "description", "default", "examples", "$comment", "deprecated", "readOnly",
    "writeOnly", "$schema", "$id", "$anchor", "$dynamicAnchor", "$vocabulary", "$defs",
    "definitions", "contentMediaType", "contentEncoding", "contentSchema",
})

_LOWER = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains")
_UPPER = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains")
_OBJECT_CLOSERS = ("additionalProperties", "patternProperties", "unevaluatedProperties")
_TYPES = ("null", "boolean", "object", "array", "number", "string", "integer")


@dataclass(frozen=True)
class Dialect:
    """What the schema's draft (its ``$schema``, default 2020-12) asserts:
    keywords of other drafts are annotations there, and before 2019-09 a
    ``$ref`` hides its sibling keywords."""

    ignored: frozenset[str]
    ref_hides_siblings: bool

    @classmethod
    def of(cls, root: Any) -> Dialect:
        own: Any = Draft202012Validator
        if isinstance(root, dict):
            with warnings.catch_warnings():  # an unknown $schema: the default draft, as the validator does
                warnings.simplefilter("ignore")
                own = validator_for(root, default=Draft202012Validator)
        every = set().union(*(v.VALIDATORS for v in _DRAFTS))
        ignored = every - set(own.VALIDATORS)
        if "contains" not in own.VALIDATORS or "dependentRequired" not in own.VALIDATORS:
            ignored |= {"minContains", "maxContains"}
        if "if" not in own.VALIDATORS:
            ignored |= {"then", "else"}
        return cls(frozenset(ignored), "dependentRequired" not in own.VALIDATORS)

    def clean(self, schema: dict[str, Any]) -> dict[str, Any]:
        """The keywords that this draft asserts (and the annotations), with
        counts written as whole floats (``"maxLength": 2.0``) as integers."""
        if self.ref_hides_siblings and "$ref" in schema:
            return {k: v for k, v in schema.items() if k == "$ref" or k in ANNOTATIONS}
        if self.ignored.intersection(schema):
            schema = {k: v for k, v in schema.items() if k not in self.ignored}
        floats = [k for k in _COUNTS if isinstance(schema.get(k), float) and schema[k].is_integer()]
        return {**schema, **{k: int(schema[k]) for k in floats}} if floats else schema


_COUNTS = ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties",
           "minContains", "maxContains")


_DRAFTS = (Draft4Validator, Draft6Validator, Draft7Validator, Draft201909Validator, Draft202012Validator)


def same(a: Any, b: Any) -> bool:
    """Equal as JSON documents (key order and 1 vs true told apart)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


@dataclass
class Resolver:
    """``$ref`` lookup within one schema document."""

    root: Any

    def resolve(self, ref: str) -> tuple[Any, tuple[str, ...]] | None:
        """The target schema and its path, or None for references that leave
        the document (the renderer reports those)."""
        if not ref.startswith("#"):
            return None
        fragment = unquote(ref[1:])
        if not fragment:
            return self.root, ()
        if fragment.startswith("/"):
            return self._pointer(fragment)
        for path, node in _walk(self.root, ()):
            if node.get("$anchor") == fragment or node.get("$id") == "#" + fragment:
                return node, path
        return None

    def _pointer(self, pointer: str) -> tuple[Any, tuple[str, ...]] | None:
        node: Any = self.root
        parts = tuple(p.replace("~1", "/").replace("~0", "~") for p in pointer[1:].split("/"))
        for part in parts:
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                return None
        return node, parts


def _walk(node: Any, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], dict[str, Any]]]:
    if isinstance(node, dict):
        yield path, node
        for key, value in node.items():
            if key not in ("enum", "const", "default", "examples"):
                yield from _walk(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _walk(value, (*path, str(i)))


def expand(schema: dict[str, Any], resolver: Resolver, seen: tuple[str, ...] = ()) -> tuple[dict[str, Any], list[Any]]:
    """The schema with its ``allOf`` (and a ``$ref`` that has sibling
    keywords) folded in; returns it and the leftover subschemas."""
    parts: list[Any] = []
    own = dict(schema)
    ref = own.get("$ref")
    if isinstance(ref, str) and set(own) - ANNOTATIONS - {"$ref"}:
        target = resolver.resolve(ref)
        if target is not None and ref not in seen and isinstance(target[0], (dict, bool)):
            del own["$ref"]
            parts.append(_expanded(target[0], resolver, (*seen, ref)))
    for sub in own.pop("allOf", None) or []:
        parts.append(_expanded(sub, resolver, seen))
    merged, leftovers = own, []
    for part in parts:
        if part is True:
            continue
        if part is False:
            leftovers.append(False)
            continue
        body, more = part
        merged, rest = merge(merged, body)
        leftovers += more + rest
    return merged, leftovers


def _expanded(sub: Any, resolver: Resolver, seen: tuple[str, ...]) -> Any:
    if isinstance(sub, bool) or not isinstance(sub, dict):
        return sub if isinstance(sub, bool) else True
    ref = sub.get("$ref")
    if isinstance(ref, str) and not set(sub) - ANNOTATIONS - {"$ref"} and ref not in seen:
        target = resolver.resolve(ref)
        if target is not None and isinstance(target[0], (dict, bool)):
            return _expanded(target[0], resolver, (*seen, ref))
    return expand(sub, resolver, seen)


def _alone(schema: dict[str, Any]) -> dict[str, Any]:
    """Without keywords that mean nothing without their partner in the same
    schema (``then`` without ``if``, ``minContains`` without ``contains``)."""
    orphans = [k for k, partner in (("then", "if"), ("else", "if"), ("minContains", "contains"),
                                    ("maxContains", "contains")) if k in schema and partner not in schema]
    return {k: v for k, v in schema.items() if k not in orphans} if orphans else schema


def merge(a: dict[str, Any], b: dict[str, Any]) -> tuple[dict[str, Any], list[Any]]:
    """``a`` and ``b`` as one schema, plus the parts of ``b`` that could not
    be folded in (to be checked on their own)."""
    a, b = _alone(a), _alone(b)
    out = dict(a)
    leftovers: list[Any] = []
    if ("prefixItems" in a) != ("prefixItems" in b) and "items" in (b if "prefixItems" in a else a):
        # items beside a prefix judges only the rest; alone it judges every item
        side = b if "prefixItems" in a else a
        leftovers.append({"items": side["items"]})
        if side is a:
            del out["items"]
        b = {k: v for k, v in b.items() if not (side is b and k == "items")}
    # additionalProperties of one side also judges the other side's properties
    closers = [_closer_conflict(b, a), _closer_conflict(a, b)]
    if closers[0] is not None:
        for key in _OBJECT_CLOSERS:
            out.pop(key, None)
    leftovers += [c for c in closers if c is not None]
    skip = {k for k in _OBJECT_CLOSERS if closers[1] is not None}
    for key in b:
        if key in out and key not in ANNOTATIONS and key not in skip and not same(out[key], b[key]) \
                and _combine(key, out[key], b[key]) is None:
            partners = _companions(key, b)
            leftovers.append({key: b[key], **partners})
            skip |= {key, *partners}
    for key, value in b.items():
        if key in skip or (key in out and (key in ANNOTATIONS or same(out[key], value))):
            continue
        out[key] = _combine(key, out[key], value) if key in out else value
    return out, leftovers


def _closer_conflict(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any] | None:
    """The object-closing part of ``b`` as a standalone check, when ``a``
    declares properties that ``b``'s additionalProperties would judge."""
    if not any(k in b for k in _OBJECT_CLOSERS) or (b.get("additionalProperties", True) is True \
            and b.get("unevaluatedProperties", True) is True):
        return None
    known = set(b.get("properties", {}))
    new = [k for k in a.get("properties", {}) if k not in known]
    if not new:
        return None
    return {k: b[k] for k in ("properties", *_OBJECT_CLOSERS) if k in b}


def _companions(key: str, schema: dict[str, Any]) -> dict[str, Any]:
    """Keywords that only mean something together with ``key``."""
    partners = {
        "if": ("then", "else"), "contains": ("minContains", "maxContains"),
        "prefixItems": ("items",), "items": ("prefixItems",),
    }
    return {k: schema[k] for k in partners.get(key, ()) if k in schema}


def _combine(key: str, a: Any, b: Any) -> Any:
    """The keyword's value meaning both ``a`` and ``b``; None if there is none."""
    if key in _LOWER and _is_number(a) and _is_number(b):
        return max(a, b)
    if key in _UPPER and _is_number(a) and _is_number(b):
        return min(a, b)
    if key == "type":
        return _types(a, b)
    if key == "required" and isinstance(a, list) and isinstance(b, list):
        return list(dict.fromkeys([*a, *b]))
    if key == "properties" and isinstance(a, dict) and isinstance(b, dict):
        return {**a, **{k: {"allOf": [a[k], v]} if k in a else v for k, v in b.items()}}
    if key in ("items", "additionalProperties", "propertyNames") and not isinstance(a, list) \
            and not isinstance(b, list):
        return {"allOf": [a, b]}
    if key == "uniqueItems":
        return bool(a) or bool(b)
    if key == "multipleOf" and _is_number(a) and _is_number(b):
        return _common_multiple(a, b)
    if key == "dependentRequired" and isinstance(a, dict) and isinstance(b, dict):
        return {**a, **{k: list(dict.fromkeys([*a.get(k, []), *v])) for k, v in b.items()}}
    if key == "enum" and isinstance(a, list) and isinstance(b, list):
        kept = [v for v in a if any(same(v, w) for w in b)]
        return kept if kept else None
    return None


def _types(a: Any, b: Any) -> Any:
    left = {a} if isinstance(a, str) else set(a)
    right = {b} if isinstance(b, str) else set(b)
    for side, other in ((left, right), (right, left)):
        if "number" in side and "integer" in other:
            side.add("integer")
    kept = [t for t in _TYPES if t in left and t in right]
    if not kept:
        return None
    return kept[0] if len(kept) == 1 else kept


def _common_multiple(a: float, b: float) -> float | None:
    big, small = Fraction(str(max(a, b))), Fraction(str(min(a, b)))
    if small and (big / small).denominator == 1:
        return max(a, b)
    if isinstance(a, int) and isinstance(b, int):
        return math.lcm(a, b)
    return None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
