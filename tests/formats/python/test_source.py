"""Names in generated Pydantic modules: the root class is named from the
schema's ``title`` (issue #29), a valid PascalCase identifier that no
import, builtin, keyword or nested class takes; ``Schema`` without one."""

from __future__ import annotations

import keyword
from typing import Any

import pytest

from conformbench.formats.python.source import IMPORTABLE, Names, root_class_name


@pytest.mark.parametrize(("title", "name"), [
    ("Order", "Order"),
    ("order line", "OrderLine"),
    ("order_line-item", "OrderLineItem"),
    ("HTTPRequest", "HTTPRequest"),
    ("Résumé entry", "ResumeEntry"),
    ("2024 report", "Schema2024Report"),
    ("Field", "FieldModel"),
    ("BaseModel", "BaseModelModel"),
    ("root model", "RootModelModel"),
    ("Literal", "LiteralModel"),
    ("ValueError", "ValueErrorModel"),
    ("None", "NoneModel"),
    ("true", "TrueModel"),
])
def test_title_becomes_a_pascal_case_class_name(title: str, name: str) -> None:
    assert root_class_name({"title": title, "type": "object"}) == name


@pytest.mark.parametrize("schema", [
    {"type": "object"}, {"title": ""}, {"title": "  --  "}, {"title": "日本"}, {"title": 7},
    {"title": None}, True, False,
])
def test_schema_is_the_fallback(schema: Any) -> None:
    assert root_class_name(schema) == "Schema"


def test_every_name_is_an_identifier_no_import_takes() -> None:
    imported = {n for names in IMPORTABLE.values() for n in names}
    titles = ["Field", "Any", "Annotated", "UUID", "date", "re", "class", "for", "print", "x y z", "a1 b2"]
    for title in titles + sorted(imported) + keyword.kwlist:
        name = root_class_name({"title": title})
        assert name.isidentifier() and name.isascii() and name[0].isupper()
        assert not keyword.iskeyword(name) and name not in imported


def test_nested_classes_never_take_the_root_name() -> None:
    names = Names(root="Order")
    assert names.class_name("order", "#/properties/order") == "Order2"
    assert names.class_name("schema", "#/properties/schema") == "Schema"
    fallback = Names()
    assert fallback.class_name("schema", "#/properties/schema") == "Schema2"
