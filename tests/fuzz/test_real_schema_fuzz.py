"""Property tests seeded with real-world schemas (the shipped SchemaStore
suite): hypothesis edits a small real schema the way real schemas differ
from generated ones (unknown keywords, boolean subschemas, allOf / anyOf /
oneOf / not / if-then-else wrappers, references, nested arrays, schema-valued
additionalProperties, deleted keys) and checks that

* building a dataset case never raises: the result is a case or an
  exclusion with a reason, and a case's oracle instances are right (the
  valid one validates, each invalid one violates exactly its keyword);
* the JSON, YAML, XML and English renderers never raise anything but their
  "cannot express" error, and the data renderings load back exactly;
* the English rendering names every unknown keyword in its closing note.

Bounded: small seeds, few examples, no deadline (the solver is checked by
the validator, not timed here).
"""

from __future__ import annotations

import json
import sys
from functools import cache
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformbench.formats.base import PAPER_SCHEMA_FORMATS, UnrenderableSchemaError, schema_formats
from conformbench.formats.nl.stated_keys import _referenced_unknowns, unknown_keywords
from conformbench.schemas.build import external_case
from conformbench.schemas.case import ExcludedSchema, SchemaCase
from conformbench.schemas.external import ExternalSchema, suite_path
from conformbench.validator.schema_validator import validator_for

sys.path.insert(0, str(Path(__file__).resolve().parent))  # helpers beside this file

from fuzz_strategies import json_values

_SETTINGS = settings(max_examples=25, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
#: seeds: the suite's schemas up to this size (the oracle stays fast on them)
_SEED_BYTES = 6000


@cache
def _seeds() -> list[tuple[str, Any]]:
    folder = suite_path("schemastore")
    small = [p for p in sorted(folder.glob("*.json")) if p.stat().st_size <= _SEED_BYTES]
    return [(p.stem, json.loads(p.read_text(encoding="utf-8"))) for p in small]


def _places(schema: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Paths of the object subschemas of ``schema`` (itself included)."""
    if not isinstance(schema, dict):
        return []
    out = [path]
    for key, value in schema.items():
        if key in ("properties", "patternProperties", "$defs", "definitions") and isinstance(value, dict):
            for name, sub in value.items():
                out += _places(sub, (*path, key, name))
        elif key in ("items", "additionalProperties", "not", "if", "then", "else", "contains"):
            out += _places(value, (*path, key))
        elif key in ("allOf", "anyOf", "oneOf", "prefixItems") and isinstance(value, list):
            for i, sub in enumerate(value):
                out += _places(sub, (*path, key, i))
    return out


def _get(schema: Any, path: tuple[Any, ...]) -> Any:
    for seg in path:
        schema = schema[seg]
    return schema


def _set(schema: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    parent = _get(schema, path[:-1])
    parent[path[-1]] = value
    return schema


_UNKNOWN = st.sampled_from(["decription", "markdownDescription", "x-taplo", "x-intellij-html-description",
                            "deprecationMessage", "ignoreCase", "$comment-like", "tsType"])
_SMALL = st.sampled_from([{"type": "string"}, {"type": "integer", "minimum": 0}, {"enum": ["a", "b"]},
                          {"type": "null"}, {"type": "array", "items": {"type": "boolean"}}, True, False, {}])


def _edit(kind: str, sub: dict[str, Any], extra: Any, name: str, refs: list[str]) -> Any:
    """One edit of the subschema ``sub`` (a fresh copy)."""
    if kind == "unknown":
        return {**sub, name: extra}
    if kind == "boolean":
        return bool(extra)
    if kind in ("allOf", "anyOf", "oneOf"):
        return {kind: [sub, extra]}
    if kind == "not":
        return {**sub, "not": extra}
    if kind == "if":
        return {"if": {"type": "object"}, "then": sub, "else": extra}
    if kind == "ref":
        return {**sub, "$ref": refs[len(name) % len(refs)]} if refs else sub
    if kind == "array":
        return {"type": "array", "items": {"type": "array", "items": sub}, "maxItems": 3}
    if kind == "additional":
        return {**sub, "additionalProperties": extra}
    if kind == "drop" and sub:
        return {k: v for k, v in sub.items() if k != sorted(sub)[len(name) % len(sub)]}
    return sub


_KINDS = st.sampled_from(["unknown", "boolean", "allOf", "anyOf", "oneOf", "not", "if", "ref", "array",
                          "additional", "drop"])


@st.composite
def real_schemas(draw: st.DrawFn) -> tuple[str, Any]:
    name, seed = draw(st.sampled_from(_seeds()))
    schema = json.loads(json.dumps(seed))
    defs = [f"#/{key}/{n}" for key in ("definitions", "$defs")
            for n in (schema.get(key) or {} if isinstance(schema, dict) else {})]
    refs = [*defs, "#"]
    for _ in range(draw(st.integers(1, 3))):
        places = _places(schema)
        if not places:
            break
        where = draw(st.sampled_from(places))
        kind = draw(_KINDS)
        extra = draw(json_values) if kind == "unknown" else draw(_SMALL)
        sub = json.loads(json.dumps(_get(schema, where)))
        schema = _set(schema, where, _edit(kind, sub, extra, draw(_UNKNOWN), refs))
    return name, schema


def _check_case(case: SchemaCase) -> None:
    validator = validator_for(case.schema)  # type: ignore[arg-type]
    assert validator.is_valid(case.valid_instance)
    for bad in case.invalid_instances:
        found = validator.violations(bad.instance)
        assert found and all((v.keyword, v.schema_path) == (bad.keyword, bad.schema_path) for v in found)
    assert not set(case.renderings) & set(case.missing_formats)
    assert set(case.renderings) | set(case.missing_formats) == set(PAPER_SCHEMA_FORMATS)
    for fmt, reason in case.missing_formats.items():  # a refusal, never a crash (python is rewritten elsewhere)
        assert fmt == "python" or "cannot express" in reason, reason


@_SETTINGS
@given(real_schemas())
def test_building_a_case_never_raises_and_its_instances_are_right(drawn: tuple[str, Any]) -> None:
    name, schema = drawn
    made = external_case(ExternalSchema(name, schema, f"{name}.json"), PAPER_SCHEMA_FORMATS)
    if isinstance(made, ExcludedSchema):
        assert made.reason and "internal error" not in made.reason, made.reason
    else:
        _check_case(made)


@_SETTINGS
@given(real_schemas())
def test_renderers_express_real_schemas_or_say_why(drawn: tuple[str, Any]) -> None:
    _, schema = drawn
    for fmt in ("json", "yaml", "xml", "nl"):
        renderer = schema_formats.get(fmt)()
        try:
            text = renderer.render(schema)
        except UnrenderableSchemaError:
            continue
        if fmt != "nl":
            assert json.dumps(renderer.load(text)) == json.dumps(schema)  # type: ignore[attr-defined]
            continue
        left_out = unknown_keywords(schema, _referenced_unknowns(schema))
        if left_out:
            note = text.splitlines()[-1]
            assert note.startswith("(Not stated above") and all(k in note for k in left_out)
