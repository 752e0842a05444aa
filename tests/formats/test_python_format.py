"""The Pydantic renderer: readable models that behave like the schema."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, RootModel, ValidationError

from conformbench.formats.base import schema_formats
from conformbench.formats.python_format import PythonSchemaFormat, load_model
from conformbench.validation.validator import validator_for

PY = PythonSchemaFormat()


def _model(schema: Any) -> type[BaseModel]:
    return load_model(PY.render(schema))


def _accepts(model: type[BaseModel], value: Any) -> bool:
    try:
        model.model_validate(value)
    except ValidationError:
        return False
    return True


def test_registered_and_deterministic() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    assert schema_formats.get("python") is PythonSchemaFormat
    assert PY.render(schema) == PY.render(dict(schema))


def test_load_model_needs_a_schema_class() -> None:
    with pytest.raises(ValueError, match="no pydantic class named Schema"):
        load_model("x = 1\n")


def test_a_field_never_hides_a_class_from_later_annotations() -> None:
    inner = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    schema = {"type": "object", "properties": {"Foo": {"type": "string"}, "foo": inner, "bar": inner},
              "required": ["Foo", "foo", "bar"]}
    model = _model(schema)
    assert _accepts(model, {"Foo": "x", "foo": {"a": 1}, "bar": {"a": 2}})
    assert not _accepts(model, {"Foo": "x", "foo": {"a": "1"}, "bar": {"a": 2}})


def test_root_object_is_a_base_model_and_others_a_root_model() -> None:
    obj = _model({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]})
    assert not issubclass(obj, RootModel) and "a" in obj.model_fields
    arr = _model({"type": "array", "items": {"type": "integer"}})
    assert issubclass(arr, RootModel)
    assert _accepts(_model(True), {"x": [1]}) and not _accepts(_model(False), None)


NAMES = ["first name", "class", "_private", "model_config", "json", "schema", "copy", "Integer",
         "a-b", "a_b", "1st", "$ref", "é", "check_object", "MISSING", "Any", "StrictStr",
         "whole_number", "Field", "re"]


def test_every_property_name_survives_through_aliases() -> None:
    schema = {"type": "object", "properties": {n: {"type": "integer"} for n in NAMES},
              "required": NAMES, "additionalProperties": False}
    source = PY.render(schema)
    assert "alias='first name'" in source and "alias='class'" in source
    model = _model(schema)
    full = {n: i for i, n in enumerate(NAMES)}
    assert _accepts(model, full)
    for name in NAMES:
        assert not _accepts(model, {k: v for k, v in full.items() if k != name}), name
        assert not _accepts(model, {**full, name: "x"}), name


@pytest.mark.parametrize(
    ("schema", "accepted", "rejected"),
    [
        ({"type": "integer"}, [1, 1.0, -5, 10**30], [True, "1", 1.5, None]),
        ({"type": "number", "maximum": 3}, [1, 2.5, 3.0], [True, "1", 3.5]),
        ({"type": "string", "pattern": "^a$"}, ["a"], ["b", 1]),
        ({"type": "boolean"}, [True, False], [0, 1, "true"]),
        ({"enum": [1, "a"]}, [1, 1.0, "a"], [True, "1", 2]),
        ({"const": False}, [False], [0, 0.0, None]),
        ({"enum": [0, False]}, [0, 0.0, False], [True, 1]),
        ({"type": "array", "uniqueItems": True}, [[1, 2], [1, True], [{"a": 1}, {"a": 2}]],
         [[1, 1.0], [{"a": 1}, {"a": 1.0}], [[0], [0.0]]]),
        ({"type": "integer", "exclusiveMinimum": 1.5, "maximum": 9.5}, [2, 9], [1, 10]),
        ({"type": "number", "multipleOf": 0.01}, [0.5, 1], [19.99, 0.001]),
        ({"type": "object", "properties": {"a": {"type": "integer"}}}, [{}, {"a": 1}], [{"a": None}, []]),
        ({"type": "object", "required": ["a"]}, [{"a": None}], [{}]),
        ({"type": "object", "properties": {"a": False}}, [{}], [{"a": 1}]),
        ({"type": "string", "format": "date"}, ["2024-02-29"], ["2023-02-29", "tomorrow"]),
    ],
)
def test_json_semantics_not_python_semantics(schema: Any, accepted: list[Any], rejected: list[Any]) -> None:
    model = _model(schema)
    validator = validator_for(schema)
    for value in accepted:
        assert validator.is_valid(value) and _accepts(model, value), value
    for value in rejected:
        assert not validator.is_valid(value) and not _accepts(model, value), value


def test_patterns_are_read_as_python_reads_them() -> None:
    """The documented difference (docs/formats.md): the model reads a
    pattern with Python's re, the reference validator as ECMA-262, where $
    is the end of the input and \\d is ASCII."""
    model = _model({"type": "string", "pattern": "^\\d$"})
    validator = validator_for({"type": "string", "pattern": "^\\d$"})
    for text in ("7\n", "\u0667"):
        assert _accepts(model, text) and not validator.is_valid(text), text


def test_helpers_are_included_only_when_used() -> None:
    plain = PY.render({"type": "object", "properties": {"a": {"type": "string", "maxLength": 3}}})
    assert "def " not in plain.split("class Schema")[0]
    rich = PY.render({"type": "array", "contains": {"type": "string"}, "uniqueItems": True})
    assert "def contains(" in rich and "def unique_items(" in rich and "def json_equal(" in rich
    assert "def multiple_of(" not in rich
