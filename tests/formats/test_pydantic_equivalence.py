"""The generated Pydantic model accepts exactly what the reference validator
accepts, on every JSON-Schema-Test-Suite group whose keywords the Python
renderer supports (required and optional tests of draft 2020-12).

Each schema is checked three ways: as the root, as a required property of
an object, and as the item schema of an array, because the renderer writes
different code for a root (RootModel), a model field (MISSING default,
aliases) and a nested type (Annotated validators).

Groups with keywords outside the renderer's set (allOf, $ref, not, if...;
none of them produced by our generator) are skipped with the renderer's own
reason. One difference is known and documented (docs/formats.md): the model
reads regular expressions (``pattern``, ``format: regex``) with Python's
``re``, the reference validator as ECMA-262. A disagreement passes only when
python-jsonschema's own Python-``re`` reading of the schema sides with the
model on a schema that has a regular expression; any other fails.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from formats_suite import SuiteGroup, optional_groups, suite_groups
from pydantic import BaseModel, ValidationError

from conformbench.errors import ConformbenchError
from conformbench.formats.base import UnrenderableSchemaError
from conformbench.formats.python_codegen import render_pydantic
from conformbench.formats.python_format import load_model
from conformbench.validation.validator import validator_for

GROUPS = suite_groups() + optional_groups()


def _variant(schema: Any, data: Any, where: str) -> tuple[Any, Any]:
    if where == "property":
        wrapper = {"type": "object", "properties": {"value": schema}, "required": ["value"]}
        return wrapper, {"value": data}
    if where == "item":
        return {"type": "array", "items": schema}, [data]
    return schema, data


def _accepts(model: type[BaseModel], instance: Any) -> bool:
    try:
        model.model_validate(instance)
    except ValidationError:
        return False
    return True


@pytest.mark.parametrize("where", ["root", "property", "item"])
@pytest.mark.parametrize("group", GROUPS, ids=[g.id for g in GROUPS])
def test_model_agrees_with_reference_validator(group: SuiteGroup, where: str) -> None:
    schema, _ = _variant(group.schema, None, where)
    try:
        source = render_pydantic(schema)
    except UnrenderableSchemaError as exc:
        pytest.skip(exc.reason)
    model = load_model(source)
    validator = validator_for(schema)
    python_re = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    disagreements = []
    for description, data, _ in group.tests:
        _, instance = _variant(group.schema, data, where)
        accepted = _accepts(model, instance)
        if accepted == validator.is_valid(instance):
            continue
        if _has_regex(schema) and accepted == python_re.is_valid(instance):
            continue  # the documented regex-dialect difference
        disagreements.append(f"{description}: reference says {validator.is_valid(instance)}")
    assert not disagreements, "\n".join(disagreements) + "\n" + source


def _has_regex(schema: Any) -> bool:
    text = json.dumps(schema)
    return any(word in text for word in ('"pattern"', '"patternProperties"', '"regex"'))


def test_supported_groups_cover_the_generator_keywords() -> None:
    """The check above is not vacuous: the groups it runs cover every keyword
    our generator produces."""
    covered: set[str] = set()
    for group in GROUPS:
        try:
            render_pydantic(group.schema)
        except (UnrenderableSchemaError, ConformbenchError):
            continue
        covered.update(_keywords(group.schema))
    generator_keywords = {
        "type", "enum", "const", "multipleOf", "minimum", "maximum", "exclusiveMinimum",
        "exclusiveMaximum", "minLength", "maxLength", "pattern", "format", "items", "prefixItems",
        "contains", "minContains", "maxContains", "minItems", "maxItems", "uniqueItems",
        "properties", "required", "additionalProperties", "patternProperties", "minProperties",
        "maxProperties", "dependentRequired",
    }
    assert generator_keywords <= covered, generator_keywords - covered


def _keywords(schema: Any) -> set[str]:
    out: set[str] = set()
    if isinstance(schema, dict):
        out.update(schema)
        for key, value in schema.items():
            if key in ("properties", "patternProperties"):
                for sub in value.values():
                    out |= _keywords(sub)
            elif isinstance(value, (dict, list)) and key not in ("enum", "const", "required",
                                                                    "dependentRequired"):
                out |= _keywords(value)
    elif isinstance(schema, list):
        for sub in schema:
            out |= _keywords(sub)
    return out


@pytest.mark.parametrize(
    "schema",
    [{"allOf": [{"type": "string"}]}, {"type": "string", "pattern": "^\\p{L}+$"}, {"$ref": "#/$defs/a"}],
)
def test_unsupported_schemas_are_refused_with_a_reason(schema: Any) -> None:
    with pytest.raises(UnrenderableSchemaError) as info:
        render_pydantic(schema)
    assert info.value.engine == "python" and info.value.reason
