"""The generated Pydantic model judges JSON text like the reference
validator on the JSON-Schema-Test-Suite (draft 2020-12, required and
optional tests), wherever the renderer reports no inexact keyword.

Each schema is checked three ways: as the root, as a required property of
an object, and as the item schema of an array, because the renderer writes
different code for a root (RootModel), a model field (defaults, aliases,
field validators) and a nested type (Annotated, list/dict validators).
Most suite schemas have no ``type`` (``{"maxProperties": 2}``), which the
renderer reports as inexact (it shows a dict; JSON Schema also takes a
string); a fourth check adds the type those keywords imply and keeps the
instances of that type, whose validity the added type does not change.

Groups with an inexact keyword are still rendered and executed (a rendering
that does not run fails). Where the only inexact keyword is the missing
``type`` of the group's own schema, its instances of a type the rendering
shows (a string where it shows ``str``) are judged as an exact group's are:
the missing type changes nothing for them. Other inexact groups' instances
may disagree, which is what the report says; how many cases are exact,
inexact, judged and skipped is pinned, so a renderer change that moves a
case from one to another is seen. The only exclusion is ``KNOWN``: strict
``int`` does not take a whole float such as 1.0, which JSON Schema counts as
an integer (docs/formats.md).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

import jsonschema
import pytest
from formats_suite import SuiteGroup, optional_groups, suite_groups
from pydantic import BaseModel, ValidationError

from conformbench.errors import ConformbenchError
from conformbench.formats.base import UnrenderableSchemaError
from conformbench.formats.python.format import PythonRendering, load_model, python_rendering
from conformbench.formats.python.kinds import implied_types
from conformbench.validator.schema_validator import validator_for

GROUPS = suite_groups() + optional_groups()
#: instance descriptions where strict int rejects a whole float (1.0, 1e308)
KNOWN = frozenset({
    "a float with zero fractional part is an integer",
    "valid if optional overflow handling is implemented",
})


def _typed(group: SuiteGroup) -> tuple[Any, list[tuple[str, Any, bool]]] | None:
    """The group's schema with the one type its keywords imply, and its
    instances of that type; None if the schema has a type or implies several."""
    schema = group.schema
    if not isinstance(schema, dict) or "type" in schema:
        return None
    implied = implied_types(schema)
    if implied is None or len(implied) != 1:
        return None
    kind = implied[0]
    tests = [t for t in group.tests if _json_type(t[1]) in ({"integer", "number"} if kind == "number" else {kind})]
    return {**schema, "type": kind}, tests


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "integer" if isinstance(value, int) else "number"
    return {str: "string", list: "array", dict: "object", type(None): "null"}[type(value)]


def _variant(schema: Any, data: Any, where: str) -> tuple[Any, Any]:
    if where == "property":
        wrapper = {"type": "object", "properties": {"value": schema}, "required": ["value"]}
        return wrapper, {"value": data}
    if where == "item":
        return {"type": "array", "items": schema}, [data]
    return schema, data


def _accepts(model: type[BaseModel], instance: Any) -> bool:
    try:
        model.model_validate_json(json.dumps(instance))
    except ValidationError:
        return False
    return True


def _cases() -> list[Any]:
    """(group, where) for every group as root, property and item, and
    "typed" only where it applies: a typeless schema whose keywords imply one
    type (issue #44: the other 202 were skipped as "the schema has a type or
    implies several", which read like a gap; they are not cases of it)."""
    return [pytest.param(g, where, id=f"{g.id}-{where}") for g in GROUPS
            for where in ("root", "property", "item", *(("typed",) if _typed(g) is not None else ()))]


@pytest.mark.parametrize(("group", "where"), _cases())
def test_model_agrees_with_reference_validator(group: SuiteGroup, where: str) -> None:
    if where == "typed":
        typed = _typed(group)
        assert typed is not None
        group = SuiteGroup(group.file, group.index, group.description, typed[0], tuple(typed[1]))
        where = "root"
    schema, _ = _variant(group.schema, None, where)
    try:
        validator = validator_for(schema)
    except ConformbenchError as exc:  # e.g. a "$ref": "#/..." that no longer resolves once nested
        pytest.skip(f"not a valid schema in this position: {exc}")
    try:
        rendering = python_rendering(schema)
    except UnrenderableSchemaError as exc:
        pytest.skip(exc.reason)
    model = load_model(rendering.text)
    assert model.__name__ == rendering.root  # the root is the last class, titled or not (#29)
    judged = _judged_types(rendering, group.schema, where)
    if judged is None:
        for _, data, _ in group.tests:  # runs on every instance without an error of its own
            _accepts(model, _variant(group.schema, data, where)[1])
        return
    tests = [t for t in group.tests if judged == ALL_TYPES or _json_type(t[1]) in judged]
    disagreements = []
    # the model reads regular expressions with Python's re, the reference
    # validator as ECMA-262 (docs/formats.md): where they differ, python-
    # jsonschema's own Python-re reading must side with the model
    python_re = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    for description, data, _ in tests:
        _, instance = _variant(group.schema, data, where)
        accepted = _accepts(model, instance)
        if accepted == validator.is_valid(instance) or description in KNOWN:
            continue
        if _has_regex(schema):
            try:
                if accepted == python_re.is_valid(instance):
                    continue
            except re.error as exc:  # only ECMA-262 (RE2) reads it: no Python reading to compare
                pytest.skip(f"a regular expression Python's re cannot compile: {exc}")
        disagreements.append(f"{description}: reference says {validator.is_valid(instance)}")
    assert not disagreements, "\n".join(disagreements) + "\n" + rendering.text


ALL_TYPES = frozenset({"null", "boolean", "integer", "number", "string", "array", "object"})
#: where the group's own schema sits in each variant
_ROOT_PATH = {"root": "", "property": "/properties/value", "item": "/items"}
_SHOWN = re.compile(r"no type: shown as (a model|[a-z |]+), while")


def _judged_types(rendering: PythonRendering, group_schema: Any, where: str) -> frozenset[str] | None:
    """The JSON types of the instances a rendering is held to: all of them
    where it is exact; where its only inexact keyword is the group schema's
    missing ``type``, the types it shows (a reference could bring that
    schema in elsewhere, so none where the group has one); else None."""
    if not rendering.inexact:
        return ALL_TYPES
    if any(word in json.dumps(group_schema) for word in ('"$ref"', '"$dynamicRef"', '"$recursiveRef"')):
        return None
    shown: set[str] = set()
    for item in rendering.inexact:
        match = _SHOWN.match(item.reason)
        if item.keyword != "type" or item.schema_path != _ROOT_PATH[where] + "/type" or match is None:
            return None
        shown |= {"object"} if match[1] == "a model" else set(match[1].split(" | "))
    return frozenset(shown | ({"integer"} if "number" in shown else set()))


def _case_kind(group: SuiteGroup, where: str) -> str:
    """What the test above does with a case: "invalid" or "unrenderable"
    (skipped), "exact", "judged" (inexact, its shown types judged) or
    "run" (inexact, executed only)."""
    if where == "typed":
        typed = _typed(group)
        assert typed is not None
        group, where = SuiteGroup(group.file, group.index, group.description, typed[0], tuple(typed[1])), "root"
    schema, _ = _variant(group.schema, None, where)
    try:
        validator_for(schema)
        rendering = python_rendering(schema)
    except UnrenderableSchemaError:
        return "unrenderable"
    except ConformbenchError:
        return "invalid"
    judged = _judged_types(rendering, group.schema, where)
    return "exact" if not rendering.inexact else "run" if judged is None else "judged"


def test_case_counts_are_pinned() -> None:
    """The suite's cases by what the test does with them (draft 2020-12
    required and optional tests, four positions): a renderer change that
    makes a case exact, inexact or unrenderable changes these counts, and
    whoever makes it updates them knowingly. Most inexact cases are a
    typeless schema shown as one type; those without a reference are judged
    on their instances of that type."""
    kinds = Counter(_case_kind(*case.values) for case in _cases())
    assert dict(kinds) == {"exact": 474, "judged": 390, "run": 632, "invalid": 120, "unrenderable": 26}


def _has_regex(schema: Any) -> bool:
    text = json.dumps(schema)
    return any(word in text for word in ('"pattern"', '"patternProperties"', '"regex"'))


def test_exact_groups_cover_the_generator_keywords() -> None:
    """The check above is not vacuous: the groups it holds to exact
    agreement cover every keyword our generator produces, and most groups."""
    covered: set[str] = set()
    exact = 0
    for group in GROUPS:
        typed = _typed(group)
        for schema in (group.schema, typed[0] if typed else None):
            try:
                rendering = python_rendering(schema) if schema is not None else None
            except UnrenderableSchemaError:
                continue
            if rendering is not None and not rendering.inexact:
                exact += 1
                covered.update(_keywords(schema))
    generator_keywords = {
        "type", "enum", "const", "multipleOf", "minimum", "maximum", "exclusiveMinimum",
        "exclusiveMaximum", "minLength", "maxLength", "pattern", "format", "items", "prefixItems",
        "contains", "minContains", "maxContains", "minItems", "maxItems", "uniqueItems",
        "properties", "required", "additionalProperties", "patternProperties", "minProperties",
        "maxProperties", "dependentRequired",
    }
    assert generator_keywords <= covered, generator_keywords - covered
    assert {"$ref", "$defs", "allOf", "anyOf", "oneOf", "not", "if"} <= covered
    assert exact >= 200, exact


def _keywords(schema: Any) -> set[str]:
    out: set[str] = set()
    if isinstance(schema, dict):
        out.update(schema)
        for key, value in schema.items():
            if key in ("properties", "patternProperties", "$defs", "dependentSchemas"):
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
    [{"type": "string", "pattern": "^\\p{L}+$"}, {"type": "object", "properties": {"a": 1}}],
)
def test_unrenderable_schemas_are_refused_with_a_reason(schema: Any) -> None:
    with pytest.raises(UnrenderableSchemaError) as info:
        python_rendering(schema)
    assert info.value.engine == "python" and info.value.reason
