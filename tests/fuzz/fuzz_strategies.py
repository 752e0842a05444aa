"""Hypothesis strategies: JSON values, and JSON Schemas drawn from the
keyword set of conformbench's generator (``schemas.config.KEYWORDS``) with
odd names and values where a renderer could trip (keys needing escapes,
strings that look like numbers or booleans, unicode, empty strings)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

__all__ = ["json_values", "plain_json_values", "plain_schemas", "schemas", "texts"]

#: text without lone surrogates (a schema file read as UTF-8 cannot hold them)
texts = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)
#: text every format can carry: no control characters except tab and newline
#: (XML 1.0 has no way to write the others), no U+FFFE/U+FFFF
plain_texts = st.text(
    st.characters(exclude_categories=("Cs", "Cc", "Co"), include_characters="\t\n")
    .filter(lambda c: c not in "\ufffe\uffff"),
    max_size=12,
)

#: strings a careless YAML/XML renderer would turn into another type
_TRICKY = st.sampled_from(
    ["", " ", "yes", "no", "on", "off", "null", "~", "true", "1_000", "0x1F", "1e3",
     "2024-01-01", "12:30", "-", "#x", "a: b", "<x/>", "&amp;", "]]>", "'\"", "\t", "\n"]
)


def _keys(text: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True), _TRICKY.filter(bool), text.filter(bool)
    )


def _json_values(text: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**53), max_value=2**53),
        st.floats(allow_nan=False, allow_infinity=False, width=64),
        text,
        _TRICKY,
    )
    keys = _keys(text)
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
        max_leaves=8,
    )


json_values = _json_values(texts)
plain_json_values = _json_values(plain_texts)

_PATTERNS = st.sampled_from(["^[a-z]+$", "^\\d{3}-\\d{4}$", "a|b", "^[A-Z][a-z]*( [A-Z][a-z]*)*$", ".*"])
_FORMATS = st.sampled_from(["date", "date-time", "email", "idn-email", "uri", "uuid", "ipv4"])
_small = st.integers(min_value=0, max_value=20)
_bound = st.one_of(st.integers(-1000, 1000), st.floats(-1e6, 1e6, allow_nan=False))


def _distinct(values: list[Any]) -> list[Any]:
    seen, out = set(), []
    for value in values:
        key = json.dumps(value, sort_keys=True)
        if key not in seen:
            seen.add(key)
            out.append(value)
    return out


@st.composite
def _string(draw: st.DrawFn) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for name, strat in (("minLength", _small), ("maxLength", _small), ("pattern", _PATTERNS), ("format", _FORMATS)):
        if draw(st.booleans()):
            schema[name] = draw(strat)
    return schema


@st.composite
def _number(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["number", "integer"]))
    schema: dict[str, Any] = {"type": kind}
    for name in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        if draw(st.booleans()):
            schema[name] = draw(_bound)
    if draw(st.booleans()):
        schema["multipleOf"] = draw(st.sampled_from([1, 2, 5, 0.5, 0.01, 3]))
    return schema


@st.composite
def _array(draw: st.DrawFn, child: st.SearchStrategy[Any]) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "array"}
    if draw(st.booleans()):
        schema["prefixItems"] = draw(st.lists(child, min_size=1, max_size=2))
    options = (
        ("items", child), ("contains", child), ("minContains", _small), ("maxContains", _small),
        ("minItems", _small), ("maxItems", _small), ("uniqueItems", st.booleans()),
    )
    for name, strat in options:
        if draw(st.booleans()):
            schema[name] = draw(strat)
    return schema


@st.composite
def _object(
    draw: st.DrawFn, child: st.SearchStrategy[Any], keys: st.SearchStrategy[str]
) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object"}
    props = draw(st.dictionaries(keys, child, max_size=3))
    if props or draw(st.booleans()):
        schema["properties"] = props
    names = list(props)
    if names and draw(st.booleans()):
        schema["required"] = draw(st.lists(st.sampled_from(names), min_size=1, unique=True))
    if draw(st.booleans()):
        schema["additionalProperties"] = draw(st.booleans() | child)
    if draw(st.booleans()):
        schema["patternProperties"] = {draw(_PATTERNS): draw(child)}
    for name in ("minProperties", "maxProperties"):
        if draw(st.booleans()):
            schema[name] = draw(_small)
    if len(names) >= 2 and draw(st.booleans()):
        schema["dependentRequired"] = {names[0]: [names[1]]}
    return schema


def _leaf(values: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        _string(),
        _number(),
        st.just({"type": "boolean"}),
        st.just({"type": "null"}),
        st.lists(values, min_size=1, max_size=4).map(_distinct).map(lambda v: {"enum": v}),
        values.map(lambda v: {"const": v}),
        st.just({}),
    )


def _schemas(text: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    keys, values = _keys(text), _json_values(text)
    return st.recursive(
        _leaf(values), lambda child: st.one_of(_array(child), _object(child, keys)), max_leaves=10
    )


#: any schema of the keyword set, names and values from any text
schemas = _schemas(texts)
#: the same, with text every schema format can carry
plain_schemas = _schemas(plain_texts)
