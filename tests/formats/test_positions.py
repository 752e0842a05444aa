"""Position buckets of constraints in real renderings (json, yaml, xml,
python, nl), found by differential rendering."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from conformbench.formats import positions
from conformbench.formats.base import schema_formats
from conformbench.formats.positions import (
    bucket_of,
    constraint_span,
    position_bucket,
)
from conformbench.formats.python.format import python_inexact_keywords
from conformbench.schemas.build import BuildOptions, build_dataset

FORMATS = ("json", "yaml", "xml", "python", "nl")
PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 20},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "tags": {"type": "array", "items": {"enum": ["a", "b"]}, "uniqueItems": True},
    },
    "required": ["name", "age"],
    "additionalProperties": False,
}


def _long(first: str, last: str) -> dict[str, object]:
    """A schema with constraint ``first`` at its top and ``last`` at its bottom."""
    props = {f"field{i}": {"type": "string"} for i in range(30)}
    props["field0"] = {"type": "string", first: 7}
    props["field29"] = {"type": "string", last: 9}
    return {"type": "object", "properties": props}


def test_bucket_boundaries() -> None:
    assert [bucket_of(f) for f in (0.0, 0.29, 0.3, 0.69, 0.7, 1.0)] == [
        "begin", "begin", "middle", "middle", "end", "end"]


@pytest.mark.parametrize("fmt", ["json", "yaml", "xml", "nl"])
def test_first_and_last_constraints(fmt: str) -> None:
    schema = _long("minLength", "maxLength")
    assert position_bucket(schema, "/properties/field0/minLength", fmt) == "begin"
    assert position_bucket(schema, "/properties/field29/maxLength", fmt) == "end"
    assert position_bucket(schema, "/properties/field15/type", fmt) == "middle"


@pytest.mark.parametrize("fmt", ["json", "yaml", "xml"])
def test_span_is_the_keyword_member(fmt: str) -> None:
    text = schema_formats.get(fmt)().render(PERSON)
    for path, word, value in [("/properties/name/maxLength", "maxLength", "20"),
                              ("/properties/age/maximum", "maximum", "150"),
                              ("/additionalProperties", "additionalProperties", "false")]:
        span = constraint_span(PERSON, path, fmt)
        assert span is not None
        assert word in text[span[0]:span[1]] and value in text[span[0]:span[1]]


def test_nl_span_is_the_sentence_part() -> None:
    text = schema_formats.get("nl")().render(PERSON)
    span = constraint_span(PERSON, "/properties/age/maximum", "nl")
    assert span is not None and "150" in text[span[0]:span[1]]


def test_python_span_is_the_field_not_the_helpers() -> None:
    text = schema_formats.get("python")().render(PERSON)
    span = constraint_span(PERSON, "/properties/tags/uniqueItems", "python")
    assert span is not None
    stated = text[span[0]:span[1]]
    # stated by the field's own short validator (no generic helper library)
    assert "unique" in stated and "def check_tags" in stated
    limit = constraint_span(PERSON, "/properties/name/maxLength", "python")
    assert limit is not None and "20" in text[limit[0]:limit[1]]


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_constraint_of_person_has_a_bucket(fmt: str) -> None:
    for path in ("/type", "/properties/name/maxLength", "/properties/age/minimum",
                 "/properties/tags/uniqueItems", "/properties/tags/items/enum", "/required",
                 "/additionalProperties"):
        if fmt == "python" and path == "/type":
            # the class states the object type; removing the keyword changes nothing
            assert position_bucket(PERSON, path, fmt) is None
            continue
        assert position_bucket(PERSON, path, fmt) in ("begin", "middle", "end"), (fmt, path)


def test_paths_through_ref_and_unknown_paths() -> None:
    schema = {"type": "object", "properties": {"a": {"$ref": "#/$defs/small"}},
              "$defs": {"small": {"type": "integer", "maximum": 3}}}
    text = schema_formats.get("json")().render(schema)
    span = constraint_span(schema, "/properties/a/maximum", "json")
    assert span is not None and text.index('"maximum"') in range(span[0], span[1])
    assert position_bucket(schema, "/properties/zzz/type", "json") is None
    assert position_bucket(schema, "", "json") is None
    assert position_bucket(schema, "/properties/a/$ref/0", "json") is None


def test_a_given_tokenizer_is_used() -> None:
    calls: list[int] = []

    def chars(text: str) -> Sequence[str]:
        calls.append(len(text))
        return list(text)

    schema = _long("minLength", "maxLength")
    assert position_bucket(schema, "/properties/field29/maxLength", "json", tokenize=chars) == "end"
    assert calls


def test_layouts_are_cached() -> None:
    positions._layout.cache_clear()
    position_bucket(PERSON, "/type", "json")
    position_bucket(PERSON, "/required", "json")
    info = positions._layout.cache_info()
    assert info.misses == 1 and info.hits == 1


def test_every_generated_constraint_is_located(tmp_path: Path) -> None:
    """In every format, each keyword that the oracle violated in a generated
    schema has a place in the rendering."""
    built = build_dataset(BuildOptions(out=tmp_path, n=25, seed=9))
    seen: set[str] = set()
    for case in built.cases:
        for bad in case.invalid_instances:
            for fmt in FORMATS:
                bucket = position_bucket(case.schema, bad.schema_path, fmt)  # type: ignore[arg-type]
                if fmt == "python" and bucket is None and (
                        bad.schema_path.endswith("/type")
                        or bad.schema_path in python_inexact_keywords(case.schema)):  # type: ignore[arg-type]
                    continue  # implied by a class or typed field, or not stated exactly (reported)
                assert bucket in ("begin", "middle", "end"), (case.id, bad.schema_path, fmt)
                seen.add(bucket)
    assert seen == {"begin", "middle", "end"}


def _reference_bucket(schema: Any, schema_path: str, fmt: str) -> str | None:
    """The definition, computed the slow way: render the whole schema with
    and without the keyword, diff the whole texts, count the tokens of the
    prefix (what positions did before it had source maps and windows)."""
    path = positions._document_path(schema, schema_path)
    if not path or isinstance(path[-1], int):
        return None
    render = schema_formats.get(fmt)().render
    text = render(schema)
    other = render(positions._without(schema, path))
    where = positions._changed_span(text.splitlines(keepends=True), other.splitlines(keepends=True),
                                    fmt == "python")
    total = len(positions.regex_tokens(text))
    if where is None or total == 0:
        return None
    return bucket_of(len(positions.regex_tokens(text[:(where[0] + where[1]) // 2])) / total)


def _keyword_paths(value: Any, prefix: str = "") -> list[str]:
    out: list[str] = []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        here = f"{prefix}/{str(key).replace('~', '~0').replace('/', '~1')}"
        out += ([here] if isinstance(value, dict) else []) + _keyword_paths(item, here)
    return out


@pytest.mark.long
def test_buckets_are_those_of_whole_renderings(tmp_path: Path) -> None:
    """Source maps and diff windows change the cost, not the answer: every
    keyword of generated schemas (the violated ones and all the others) gets
    the bucket and span that whole-rendering differencing gives."""
    built = build_dataset(BuildOptions(out=tmp_path, n=12, seed=11))
    compared = 0
    for case in built.cases:
        paths = sorted(set(_keyword_paths(case.schema)) | {b.schema_path for b in case.invalid_instances})
        for fmt in FORMATS:
            found = positions.positions_of(case.schema, paths, [fmt])  # type: ignore[arg-type]
            for path in paths:
                assert found[path][fmt] == _reference_bucket(case.schema, path, fmt), (case.id, fmt, path)
                compared += 1
    assert compared > 900


def test_a_custom_tokenizer_counts_prefixes_itself() -> None:
    schema = _long("minLength", "maxLength")
    words = positions.position_bucket(schema, "/properties/field29/maxLength", "yaml")
    chars = positions.position_bucket(schema, "/properties/field29/maxLength", "yaml", tokenize=list)
    assert words == chars == "end"
