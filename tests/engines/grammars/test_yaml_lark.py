"""The YAML grammar on chosen documents: what our dumper writes and the
variants models write are taken; what the strict reader would misread or
the schema forbids is refused."""

from __future__ import annotations

import random

import pytest

from conformbench.engines.grammars.matcher import grammar_matcher
from conformbench.engines.grammars.random_documents import random_walk
from conformbench.formats.yaml.format import YamlOutput

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 12},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "tags": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+$"}, "minItems": 1, "maxItems": 3},
        "home": {
            "type": "object",
            "properties": {"city": {"enum": ["Oslo", "yes", 3, None]}, "zip": {"type": "number"}},
            "required": ["city"],
        },
    },
    "required": ["name", "age"],
    "additionalProperties": False,
}


@pytest.mark.parametrize("value", [
    {"name": "Bob", "age": 5},
    {"name": "123", "age": 0, "tags": ["a", "bc"], "home": {"city": "yes", "zip": 1.5}},
    {"name": "", "age": 150, "home": {"city": None, "x": [1, {"y": "z"}]}},
    {"name": "it's: ok", "age": 7, "home": {"city": 3, "zip": -1e-05}},
])
def test_dumped_documents_are_accepted(accepts, value):
    assert accepts(PERSON, "yaml", YamlOutput().dump(value))


@pytest.mark.parametrize("text", [
    "name: Bob\nage: 5",  # no final line break
    "---\nname: Bob\nage: 5\n",  # document start marker
    "name: 'Bob'\nage: 5\n",
    'name: "B\\u00f6b"\nage: 5\n',
    "name: Bob\nage: 5\ntags:\n  - abc\n",  # sequence indented under its key
    "name: Bob\nage: 5\nhome:\n  city: Oslo\n  extra: [1, 'a', {'k': null}]\n",  # flow style in an open value
    "name: Bob\nage: 5\nhome:\n  city: Oslo\n  extra:\n    deep:\n    - 1\n",  # block style in an open value
])
def test_variants_are_accepted(accepts, text):
    assert accepts(PERSON, "yaml", text)


@pytest.mark.parametrize(("text", "why"), [
    ("name: 123\nage: 5", "a plain 123 is an integer, not a string"),
    ("name: true\nage: 5", "a plain true is a boolean"),
    ("name: null\nage: 5", "a plain null is null"),
    ("name: Bob \nage: 5", "a trailing space is dropped by the reader"),
    ("name: a: b\nage: 5", "': ' inside a plain scalar"),
    ("name: a #b\nage: 5", "' #' starts a comment"),
    ("name: abcdefghijklm\nage: 5", "maxLength"),
    ("name: Bob\nage: -1", "minimum"),
    ("name: Bob\nage: 151", "maximum"),
    ("name: Bob\nage: 5.0", "integer"),
    ("age: 5\nname: Bob", "property order"),
    ("name: Bob", "required"),
    ("name: Bob\nage: 5\nnick: B", "additionalProperties: false"),
    ("name: Bob\nage: 5\ntags: []", "minItems"),
    ("name: Bob\nage: 5\ntags:\n- a\n- b\n- c\n- d", "maxItems"),
    ("name: Bob\nage: 5\ntags:\n- A", "pattern"),
    ("name: Bob\nage: 5\nhome:\n  city: Paris", "enum"),
    ("name: Bob\nage: 5\nhome:\n  city: Oslo\n  city: Oslo", "a duplicate key"),
    ("name: Bob\nage: 5\nhome:\n   city: Oslo", "indentation of the level"),
    ("name: Bob\nage: 5\n# note", "comments"),
])
def test_refused(accepts, text, why):
    assert not accepts(PERSON, "yaml", text), why


def test_numbers_with_bounds_and_steps(accepts):
    schema = {"type": "number", "exclusiveMinimum": 0, "maximum": 10, "multipleOf": 0.25}
    for text in ("0.25", "10", "9.75", "2.50"):
        assert accepts(schema, "yaml", text), text
    for text in ("0", "10.25", "0.3", "-1", "1e1"):
        assert not accepts(schema, "yaml", text), text
    big = {"type": "number", "minimum": 306.19571362586817}
    assert accepts(big, "yaml", YamlOutput().dump(1.4726770781501522e16))
    assert not accepts(big, "yaml", "3.06e+2")


def test_object_counts_and_dependencies(accepts):
    schema = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}, "c": {"type": "integer"}},
        "minProperties": 2, "maxProperties": 3, "dependentRequired": {"a": ["c"]},
    }
    assert accepts(schema, "yaml", "b: 1\nc: 2")
    assert accepts(schema, "yaml", "a: 1\nc: 2\nx: 3")
    assert not accepts(schema, "yaml", "b: 1")  # minProperties
    assert not accepts(schema, "yaml", "a: 1\nb: 2")  # dependentRequired
    assert not accepts(schema, "yaml", "a: 1\nb: 2\nc: 3\nx: 4")  # maxProperties
    assert not accepts(schema, "yaml", "b: 1\nc: 2\nb: 3")  # an undeclared key never repeats a declared one


def test_tuples(accepts):
    schema = {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": False}
    assert accepts(schema, "yaml", "- a\n- 1")
    assert accepts(schema, "yaml", "- a")
    assert accepts(schema, "yaml", "[]")
    assert not accepts(schema, "yaml", "- a\n- 1\n- 2")
    assert not accepts(schema, "yaml", "- 1")


def test_root_scalars_end_as_the_dumper_ends_them(accepts):
    assert YamlOutput().dump("hello") == "hello\n...\n"
    assert accepts({"type": "string"}, "yaml", "hello\n...\n")
    assert accepts({"type": "string"}, "yaml", "hello")


@pytest.mark.parametrize("schema", [{"type": "string"}, {"type": "object"}, {}])
def test_random_documents_read_back(vocab, schema):
    """Documents drawn from the grammar read as the type it promised."""
    rng = random.Random(11)
    expected = {"string": str, "object": dict}.get(schema.get("type", ""))
    finished = 0
    for _ in range(12):
        walk = random_walk(grammar_matcher(schema, "yaml", vocab), vocab, rng)
        if not walk.finished:
            continue
        finished += 1
        parsed = YamlOutput().parse(walk.text)
        assert parsed.ok or "duplicate key" in (parsed.error or ""), (walk.text, parsed.error)
        if parsed.ok and expected is not None:
            assert isinstance(parsed.value, expected), walk.text
    assert finished >= 6
