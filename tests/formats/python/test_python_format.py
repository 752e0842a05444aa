"""The Pydantic renderer: models written as people write them, that judge
JSON text like the schema, and an honest list of what they state inexactly."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, RootModel, ValidationError

from conformbench.formats.base import UnrenderableSchemaError, schema_formats
from conformbench.formats.python.format import (
    PythonSchemaFormat,
    load_model,
    python_inexact_keywords,
    python_rendering,
)
from conformbench.validator.schema_validator import validator_for

PY = PythonSchemaFormat()
SRC = Path(__file__).resolve().parents[3] / "src"


def _model(schema: Any) -> type[BaseModel]:
    return load_model(PY.render(schema))


def _accepts(model: type[BaseModel], value: Any) -> bool:
    try:
        model.model_validate_json(json.dumps(value))
    except ValidationError:
        return False
    return True


def _agrees(schema: Any, accepted: list[Any], rejected: list[Any]) -> None:
    model = _model(schema)
    validator = validator_for(schema)
    for value in accepted:
        assert validator.is_valid(value) and _accepts(model, value), value
    for value in rejected:
        assert not validator.is_valid(value) and not _accepts(model, value), value


def test_registered_and_deterministic() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"enum": ["x", 1]}}}
    assert schema_formats.get("python") is PythonSchemaFormat
    assert PY.render(schema) == PY.render(json.loads(json.dumps(schema)))


def test_byte_identical_across_hash_seeds() -> None:
    schema = {"type": "object", "properties": {"k": {"type": "array", "uniqueItems": True,
              "items": {"enum": ["b", "a", "c"]}}}, "patternProperties": {"^x": {"type": "integer"}},
              "dependentRequired": {"k": ["z", "y"]}, "minProperties": 1}
    code = ("import json,sys; from conformbench.formats.python.format import render_pydantic; "
            f"sys.stdout.write(render_pydantic(json.loads({json.dumps(json.dumps(schema))})))")
    outputs = set()
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(SRC)}
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True,
                              timeout=60)
        outputs.add(done.stdout)
    assert len(outputs) == 1 and outputs == {PY.render(schema)}


def test_load_model_needs_a_schema_class() -> None:
    with pytest.raises(ValueError, match="no pydantic class named Schema"):
        load_model("x = 1\n")


def test_written_as_people_write_models() -> None:
    schema = {"type": "object", "properties": {
        "name": {"type": "string", "minLength": 1, "pattern": "^[A-Z]"},
        "age": {"type": "integer", "minimum": 0},
        "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
        "kind": {"enum": ["a", "b"]}, "note": {"type": ["string", "null"]},
    }, "required": ["name"], "additionalProperties": False}
    text = PY.render(schema)
    assert "class Schema(BaseModel):" in text
    assert 'model_config = ConfigDict(strict=True, extra="forbid", regex_engine="python-re")' in text
    assert 'name: str = Field(min_length=1, pattern=r"^[A-Z]")' in text
    assert "age: int = Field(None, ge=0)" in text and 'kind: Literal["a", "b"] = None' in text
    assert "note: str | None = None" in text
    assert '@field_validator("tags")' in text and "len(set(v)) < len(v)" in text
    head = text.split("\nclass ")[0]
    assert all(line.startswith(("from ", "import ")) for line in head.splitlines() if line)
    assert "def " not in head and "jsonschema" not in text


def test_a_field_never_hides_a_class_from_later_annotations() -> None:
    inner = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    schema = {"type": "object", "properties": {"Foo": {"type": "string"}, "foo": inner, "bar": inner,
                                               "date": {"type": "string", "format": "date"}},
              "required": ["Foo", "foo", "bar"]}
    model = _model(schema)
    assert _accepts(model, {"Foo": "x", "foo": {"a": 1}, "bar": {"a": 2}, "date": "2024-01-31"})
    assert not _accepts(model, {"Foo": "x", "foo": {"a": "1"}, "bar": {"a": 2}})
    assert not _accepts(model, {"Foo": "x", "foo": {"a": 1}, "bar": {"a": 2}, "date": "2024-02-30"})


def test_root_object_is_a_base_model_and_others_a_root_model() -> None:
    obj = _model({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]})
    assert not issubclass(obj, RootModel) and "a" in obj.model_fields
    arr = _model({"type": "array", "items": {"type": "integer"}})
    assert issubclass(arr, RootModel)
    assert _accepts(_model(True), {"x": [1]}) and not _accepts(_model(False), None)


NAMES = ["first name", "class", "_private", "model_config", "json", "schema", "copy", "Integer",
         "a-b", "a_b", "1st", "$ref", "é", "check_object", "Any", "str", "date", "Field", "re", "root"]


def test_every_property_name_survives_through_aliases() -> None:
    schema = {"type": "object", "properties": {n: {"type": "integer"} for n in NAMES},
              "required": NAMES, "additionalProperties": False}
    source = PY.render(schema)
    assert 'alias="first name"' in source and 'alias="class"' in source
    model = _model(schema)
    full = {n: i for i, n in enumerate(NAMES)}
    assert _accepts(model, full)
    for name in NAMES:
        assert not _accepts(model, {k: v for k, v in full.items() if k != name}), name
        assert not _accepts(model, {**full, name: "x"}), name


@pytest.mark.parametrize(
    ("schema", "accepted", "rejected"),
    [
        ({"type": "integer"}, [1, -5, 10**30], [True, "1", 1.5, None]),
        ({"type": "number", "maximum": 3}, [1, 2.5, 3.0], [True, "1", 3.5]),
        # ("a\n" is left out: Python's $ takes it, ECMA-262's does not; docs/formats.md)
        ({"type": "string", "pattern": "^a$"}, ["a"], ["b", 1]),
        ({"type": "boolean"}, [True, False], [0, 1, "true"]),
        ({"enum": [2, "a"]}, [2, 2.0, "a"], [True, "2", 3]),
        ({"const": "x"}, ["x"], [None, "X", 1]),
        ({"type": "array", "uniqueItems": True, "items": {"type": "string"}}, [["a", "b"]], [["a", "a"]]),
        ({"type": "integer", "exclusiveMinimum": 1.5, "maximum": 9.5}, [2, 9], [1, 10]),
        ({"type": "object", "properties": {"a": {"type": "integer"}}}, [{}, {"a": 1}], [{"a": None}, []]),
        ({"type": "object", "required": ["a"]}, [{"a": None}], [{}]),
        ({"type": "object", "properties": {"a": False}}, [{}], [{"a": 1}]),
        ({"type": "string", "format": "date"}, ["2024-02-29"], ["2023-02-29", "tomorrow"]),
        ({"type": "string", "format": "ipv4"}, ["10.0.0.1"], ["300.1.1.1", "1.2.3"]),
        ({"type": "object", "minProperties": 2, "maxProperties": 3, "properties": {"a": {}}},
         [{"a": 1, "b": 2}, {"x": 1, "y": 2, "z": 3}], [{"a": 1}, {"a": 1, "b": 2, "c": 3, "d": 4}]),
        ({"type": "object", "properties": {"a": {}, "b": {}}, "dependentRequired": {"a": ["b"]}},
         [{}, {"b": 1}, {"a": 1, "b": 2}], [{"a": 1}]),
        ({"type": "array", "items": {"type": "integer"}, "contains": {"minimum": 10}, "minContains": 2,
          "maxContains": 3}, [[10, 11], [1, 10, 20, 30]], [[10], [10, 11, 12, 13], []]),
        ({"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": {"type": "boolean"}},
         [[], ["a"], ["a", 1, True, False]], [[1], ["a", "b"], ["a", 1, 2]]),
        ({"type": "object", "patternProperties": {"^x_": {"type": "integer"}}, "additionalProperties": False},
         [{}, {"x_a": 1}], [{"x_a": "1"}, {"y": 1}]),
        ({"type": "object", "additionalProperties": {"type": "string"}, "properties": {"n": {"type": "integer"}}},
         [{"n": 1, "s": "t"}], [{"n": 1, "s": 2}, {"n": "1"}]),
    ],
)
def test_json_semantics_not_python_semantics(schema: Any, accepted: list[Any], rejected: list[Any]) -> None:
    _agrees(schema, accepted, rejected)
    assert python_inexact_keywords(schema) == []


def test_patterns_are_read_as_python_reads_them() -> None:
    """The documented difference (docs/formats.md): the model reads a
    pattern with Python's re, the reference validator as ECMA-262, where $
    is the end of the input and \\d is ASCII."""
    model = _model({"type": "string", "pattern": "^\\d$"})
    validator = validator_for({"type": "string", "pattern": "^\\d$"})
    for text in ("7\n", "\u0667"):
        assert _accepts(model, text) and not validator.is_valid(text), text


@pytest.mark.parametrize(
    ("schema", "inexact"),
    [
        ({"type": "number", "multipleOf": 0.01}, ["/multipleOf"]),
        ({"type": "string", "format": "email"}, ["/format"]),
        ({"type": "string", "format": "hostname"}, ["/format"]),
        ({"enum": [1, "a"]}, ["/enum"]),
        ({"type": "array", "uniqueItems": True}, ["/uniqueItems"]),
        ({"type": "array", "prefixItems": [{"type": "string"}], "items": False}, ["/prefixItems"]),
        ({"minimum": 3}, ["/type"]),
        ({"type": "array", "contains": {"type": "string", "format": "date"}}, ["/contains/format"]),
        ({"$ref": "https://example.com/other.json"}, ["/$ref"]),
    ],
)
def test_inexact_keywords_are_reported(schema: Any, inexact: list[str]) -> None:
    assert python_inexact_keywords(schema) == inexact
    assert all(item.reason for item in python_rendering(schema).inexact)


def test_a_reported_keyword_is_one_where_the_model_really_differs() -> None:
    """The reports are not decoration: each of these models accepts or
    rejects a value the validator judges the other way."""
    cases = [
        ({"type": "number", "multipleOf": 0.01}, 19.99),
        ({"enum": [1, "a"]}, True),
        ({"type": "array", "prefixItems": [{"type": "string"}], "items": False}, []),
        ({"minimum": 3}, "text"),
        ({"type": "string", "format": "uuid"}, "123e4567e89b12d3a456426614174000"),
    ]
    for schema, value in cases:
        assert _accepts(_model(schema), value) != validator_for(schema).is_valid(value), schema


def test_unknown_keywords_are_annotations() -> None:
    schema = {"type": "object", "title": "T", "x-foo": {"bar": 1}, "$comment": "c",
              "properties": {"a": {"type": "string", "decription": "misspelt", "description": "An a."}}}
    rendering = python_rendering(schema)
    assert rendering.inexact == ()
    assert 'a: str = Field(None, description="An a.")' in rendering.text
    _agrees(schema, [{}, {"a": "x"}], [{"a": 1}])


def test_unrenderable_only_when_nothing_sensible_exists() -> None:
    with pytest.raises(UnrenderableSchemaError) as info:
        PY.render({"type": "string", "pattern": "^\\p{L}+$"})
    assert info.value.engine == "python" and "Python regular expression" in info.value.reason
    with pytest.raises(UnrenderableSchemaError):
        PY.render({"type": "object", "properties": {"a": 3}})


# --- the root class is named from the schema's title (issue #29) -------------

GOLDEN_DIR = Path(__file__).parent / "golden"
ORDER = {
    "title": "Order", "description": "One customer order.", "type": "object",
    "properties": {
        "id": {"type": "string", "minLength": 1},
        "lines": {"type": "array", "minItems": 1, "items": {
            "type": "object", "properties": {"sku": {"type": "string"}, "qty": {"type": "integer", "minimum": 1}},
            "required": ["sku", "qty"]}},
        "order": {"type": "object", "properties": {"rank": {"type": "integer"}}},
        "parent": {"$ref": "#"},
    },
    "required": ["id", "lines"],
}


def test_titled_root_matches_golden() -> None:
    rendering = python_rendering(ORDER)
    path = GOLDEN_DIR / "titled_order.python"
    if os.environ.get("CONFORMBENCH_UPDATE_GOLDEN") == "1":
        path.write_text(rendering.text, encoding="utf-8")
    assert rendering.text == path.read_text(encoding="utf-8")
    assert rendering.root == "Order" and "class Order(BaseModel):" in rendering.text
    assert "class Order2(BaseModel):" in rendering.text  # the nested "order" does not take the root's name
    assert 'parent: "Order" = None' in rendering.text  # the reference to "#" names the root
    assert "Schema" not in rendering.text


def test_titled_root_judges_like_the_validator() -> None:
    model = load_model(python_rendering(ORDER).text)
    assert model.__name__ == "Order"
    validator = validator_for(ORDER)
    for value in ({"id": "a", "lines": [{"sku": "x", "qty": 1}]}, {"id": "", "lines": [{"sku": "x", "qty": 1}]},
                  {"id": "a", "lines": []}, {"id": "a", "lines": [{"sku": "x", "qty": 0}]},
                  {"id": "a", "lines": [{"sku": "x", "qty": 2}], "parent": {"id": "b", "lines": [{"sku": "y", "qty": 1}]}},
                  {"id": "a", "lines": [{"sku": "x", "qty": 2}], "parent": {"id": "b"}}):
        assert _accepts(model, value) == validator.is_valid(value), value


@pytest.mark.parametrize(("schema", "root"), [
    ({"title": "Tags", "type": "array", "items": {"type": "string"}}, "Tags"),
    ({"title": "Field", "type": "integer", "minimum": 0}, "FieldModel"),
    ({"title": "Link", "$ref": "#/$defs/node", "$defs": {"node": {"type": "object",
      "properties": {"next": {"$ref": "#/$defs/node"}}}}}, "Link"),
    ({"title": "Pet", "anyOf": [{"type": "object", "properties": {"a": {"type": "integer"}}}, {"type": "null"}]}, "Pet"),
    ({"title": "   ", "type": "string"}, "Schema"),
])
def test_every_root_shape_takes_the_title(schema: dict[str, Any], root: str) -> None:
    rendering = python_rendering(schema)
    assert rendering.root == root and f"class {root}(" in rendering.text
    assert load_model(rendering.text).__name__ == root == load_model(rendering.text, root).__name__


def test_a_title_changes_only_the_root_name() -> None:
    """Each golden schema with a title renders as without one, ``Schema``
    renamed: nested classes keep their names, and the model still loads."""
    from formats_cases import GOLDEN  # the formats tests' shared case table

    for case in GOLDEN.values():
        plain = python_rendering(case.schema)
        titled = python_rendering({"title": "Purchase order", **case.schema})
        assert plain.root == "Schema" and titled.root == "PurchaseOrder"
        assert titled.text == re.sub(r"\bSchema\b", "PurchaseOrder", plain.text), case.name
        assert load_model(titled.text).__name__ == "PurchaseOrder"
