"""Source maps: for every object of a schema and every keyword in it, the
map's redraw of that object without the keyword, put back in the rendering,
is exactly the rendering of the schema without the keyword (json, yaml,
xml, English), on generated schemas and the JSON-Schema-Test-Suite's. (The
English map has blocks for subschemas only; positions render the whole
schema again for anything else.)"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformbench.errors import ConformbenchError
from conformbench.files import JSON_SCHEMA_TEST_SUITE, shipped_data
from conformbench.formats.base import schema_formats
from conformbench.formats.source_map import DocPath
from conformbench.schemas.build import BuildOptions, build_dataset

MAPPED = ("json", "yaml", "xml", "nl")


def _suite() -> Path:
    """The JSON-Schema-Test-Suite copy shipped in the package (a lone clone has it)."""
    return shipped_data(JSON_SCHEMA_TEST_SUITE) / "tests"


def _objects(value: Any, path: DocPath = ()) -> Iterator[tuple[DocPath, dict[str, Any]]]:
    if isinstance(value, dict):
        yield path, value
        for key, item in value.items():
            yield from _objects(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _objects(item, (*path, i))


def _without(value: Any, path: DocPath, key: str) -> Any:
    if not path:
        return {k: v for k, v in value.items() if k != key}
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {k: (_without(v, rest, key) if k == head else v) for k, v in value.items()}
    return [(_without(v, rest, key) if i == head else v) for i, v in enumerate(value)]


def _body(text: str) -> str:
    """The text without English's closing note on unknown keywords: the note
    sums up the whole document (removing an unknown key anywhere changes it),
    so it lies outside every block and no local redraw touches it."""
    lines = text.split("\n")
    if lines and lines[-1].startswith("(Not stated above:"):
        lines = lines[:-1]
    return "\n".join(lines)


def _check(fmt: str, schema: Any) -> int:
    """How many (object, keyword) redraws were checked."""
    renderer = schema_formats.get(fmt)()
    try:
        source = renderer.source_map(schema)
    except ConformbenchError:
        return 0
    assert source is not None and source.text == renderer.render(schema)
    checked = 0
    for path, node in _objects(schema):
        block = source.find(path)
        if block is None:  # English draws subschemas as bullets, not maps of them or data
            assert fmt == "nl" and path, path
            continue
        if path:
            assert block.redraw(node) == source.text[block.start:block.end], (fmt, path)
        for key in node:
            less = {k: v for k, v in node.items() if k != key}
            drawn = block.redraw(less)
            other = drawn if not path else source.text[:block.start] + drawn + source.text[block.end:]
            assert _body(other) == _body(renderer.render(_without(schema, path, key))), (fmt, path, key)
            checked += 1
    return checked


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> list[Any]:
    built = build_dataset(BuildOptions(out=tmp_path_factory.mktemp("ds"), n=25, seed=3))
    return [case.schema for case in built.cases]


@pytest.mark.parametrize("fmt", MAPPED)
def test_redraws_match_renderings_on_generated_schemas(fmt: str, generated: list[Any]) -> None:
    assert sum(_check(fmt, schema) for schema in generated) > 300


@pytest.mark.long
@pytest.mark.parametrize("fmt", MAPPED)
def test_redraws_match_renderings_on_the_suite(fmt: str) -> None:
    """Arrays of schemas, empty objects, odd keys ($ref, "foo\\nbar"), nested
    arrays: the shapes generated schemas lack."""
    checked = 0
    for path in sorted((_suite() / "draft2020-12").glob("*.json")):
        for group in json.loads(path.read_text(encoding="utf-8")):
            checked += _check(fmt, group["schema"])
    assert checked > 1500


@pytest.mark.parametrize("fmt", ["yaml", "json", "xml", "nl"])
def test_objects_in_arrays_and_lone_members(fmt: str) -> None:
    """The YAML cases that edit lines: a first member of an object in an
    array (its ``- `` moves on), an object left empty (``{}``)."""
    schema = {
        "allOf": [{"type": "string", "minLength": 1}, {"maxLength": 3}, {"not": {"const": "x"}}],
        "items": [[{"a": 1, "b": 2}], {"c": {"d": {}}}],
        "properties": {"p": {"type": "integer"}, "q": {"items": {"type": "string"}}},
        "x-long-key-" + "k" * 140: {"type": "null", "minimum": 1},
    }
    assert _check(fmt, schema) > 10
