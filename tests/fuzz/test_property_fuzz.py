"""Property tests (hypothesis) over the untrusted-input surfaces.

Guards: output parsers never raise and only ever return JSON-model values
(their catch-all and value checks); output ``dump`` then ``parse`` returns
the value (the formats are lossless for data), XML under a schema too; the
oracle never raises and its valid instances are valid; schema renderers
never raise
and YAML/XML/JSON renderings load back to exactly the schema, key order
included (lossless renderings); the validator never raises on any instance
and ``is_valid`` agrees with ``violations``.
"""

from __future__ import annotations

import json
import math
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from conformbench.formats.base import (
    OutputFormat,
    SchemaFormat,
    UnrenderableSchemaError,
    UnrepresentableValueError,
    output_formats,
    schema_formats,
)
from conformbench.schemas.oracle import find_valid
from conformbench.validator.schema_validator import check_schema, validator_for

sys.path.insert(0, str(Path(__file__).resolve().parent))  # helpers beside this file

from fuzz_strategies import json_values, plain_json_values, plain_schemas, schemas

OUTPUT_FORMATS = ("json", "yaml", "xml")
DATA_SCHEMA_FORMATS = ("json", "yaml", "xml")
ALL_SCHEMA_FORMATS = ("json", "yaml", "xml", "python", "nl")

_FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@cache
def _out(name: str) -> OutputFormat:
    return output_formats.get(name)()


@cache
def _schema_fmt(name: str) -> SchemaFormat:
    return schema_formats.get(name)()


def _canon(value: Any) -> str:
    """Exact JSON text: distinguishes 1 / 1.0 / true and key order."""
    return json.dumps(value, ensure_ascii=False)


def _is_json_model(value: Any) -> bool:
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_json_model(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_is_json_model(v) for v in value)
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or isinstance(value, (bool, int))


def _check_parsed(fmt: str, text: str) -> None:
    result = _out(fmt).parse(text, schema=None)
    if result.ok:
        assert _is_json_model(result.value), f"{fmt}: value outside the JSON data model"
    else:
        assert isinstance(result.error, str) and result.error.strip()


_doc_like = st.one_of(
    st.text(max_size=200),
    st.text(alphabet=st.sampled_from(list('{}[]<>/":,-&;!?*#\n abc01\\\'`~|%@')), max_size=120),
    json_values.map(lambda v: json.dumps(v, ensure_ascii=False)),
)


@pytest.mark.long
@pytest.mark.parametrize("fmt", OUTPUT_FORMATS)
@_FAST
@given(text=_doc_like)
def test_parsers_never_raise(fmt: str, text: str) -> None:
    _check_parsed(fmt, text)


@pytest.mark.long
@pytest.mark.parametrize("fmt", OUTPUT_FORMATS)
@_FAST
@given(value=plain_json_values, data=st.data())
def test_parsers_survive_mutated_documents(fmt: str, value: Any, data: st.DataObject) -> None:
    """Cut, spliced and corrupted versions of well-formed answers."""
    text = _out(fmt).dump(value)
    i = data.draw(st.integers(0, len(text)))
    j = data.draw(st.integers(i, len(text)))
    junk = data.draw(st.text(max_size=8))
    _check_parsed(fmt, text[:i] + junk + text[j:])


@pytest.mark.long
@pytest.mark.parametrize("fmt", OUTPUT_FORMATS)
@_FAST
@given(value=plain_json_values)
def test_dump_then_parse_round_trips(fmt: str, value: Any) -> None:
    parsed = _out(fmt).parse(_out(fmt).dump(value))
    assert parsed.ok, parsed.error
    assert _canon(parsed.value) == _canon(value)


@pytest.mark.parametrize("fmt", OUTPUT_FORMATS)
@_FAST
@given(value=json_values)
def test_dump_is_faithful_or_refuses(fmt: str, value: Any) -> None:
    """Any text (control characters too): the documented refusal, or a
    faithful round trip; never a silently altered value."""
    try:
        text = _out(fmt).dump(value)
    except UnrepresentableValueError as exc:
        assert str(exc).strip()
        return
    parsed = _out(fmt).parse(text)
    assert parsed.ok, parsed.error
    assert _canon(parsed.value) == _canon(value)


@pytest.mark.long
@settings(_FAST, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(schema=plain_schemas)
def test_xml_dump_then_parse_round_trips_under_a_schema(schema: dict[str, Any]) -> None:
    """XML carries no types of its own: the schema gives them back. The
    value is the oracle's valid instance of the schema."""
    found = find_valid(schema)
    assume(found.found)
    xml = _out("xml")
    parsed = xml.parse(xml.dump(found.instance, schema), schema)
    assert parsed.ok, parsed.error
    assert _canon(parsed.value) == _canon(found.instance)


@_FAST
@given(schema=schemas)
def test_oracle_never_raises_and_its_instances_are_valid(schema: dict[str, Any]) -> None:
    result = find_valid(schema)
    assert result.status in ("found", "unsatisfiable", "unknown", "invalid")
    if result.found:
        assert validator_for(schema).is_valid(result.instance)
    else:
        assert result.reason.strip()


@_FAST
@given(schema=schemas)
def test_strategy_draws_valid_schemas(schema: dict[str, Any]) -> None:
    check_schema(schema)  # raises SchemaError if the strategy drifts


@pytest.mark.long
@pytest.mark.parametrize("fmt", ALL_SCHEMA_FORMATS)
@_FAST
@given(schema=plain_schemas)
def test_renderers_never_raise(fmt: str, schema: dict[str, Any]) -> None:
    renderer = _schema_fmt(fmt)
    try:
        text = renderer.render(schema)
    except UnrenderableSchemaError as exc:
        # a documented exclusion (e.g. a keyword Pydantic cannot express);
        # data formats have none for text they can carry
        assert fmt not in DATA_SCHEMA_FORMATS and fmt != "nl", str(exc)
        assert str(exc).strip()
        return
    assert isinstance(text, str) and text.strip()
    text.encode("utf-8")


@pytest.mark.long
@pytest.mark.parametrize("fmt", ALL_SCHEMA_FORMATS)
@_FAST
@given(schema=schemas)
def test_renderers_render_or_refuse_any_text(fmt: str, schema: dict[str, Any]) -> None:
    """Control characters in names and values: a rendering or the
    documented exclusion, nothing else."""
    try:
        text = _schema_fmt(fmt).render(schema)
    except UnrenderableSchemaError as exc:
        assert str(exc).strip()
        return
    assert isinstance(text, str)
    text.encode("utf-8")


@pytest.mark.long
@pytest.mark.parametrize("fmt", DATA_SCHEMA_FORMATS)
@_FAST
@given(schema=plain_schemas)
def test_renderings_load_back_exactly(fmt: str, schema: dict[str, Any]) -> None:
    renderer = _schema_fmt(fmt)
    loaded = renderer.load(renderer.render(schema))
    assert _canon(loaded) == _canon(schema)


@pytest.mark.long
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=schemas, instance=json_values)
def test_validator_never_raises(schema: dict[str, Any], instance: Any) -> None:
    validator = validator_for(schema)
    violations = validator.violations(instance)
    assert validator.is_valid(instance) == (not violations)
    for v in violations:
        assert v.keyword and isinstance(v.message, str)


@settings(max_examples=60, deadline=None)
@given(schema=schemas, depth=st.integers(500, 3000))
def test_validator_survives_deep_instances(schema: dict[str, Any], depth: int) -> None:
    deep: Any = 1
    for _ in range(depth):
        deep = [deep]
    validator = validator_for(schema)
    assert validator.is_valid(deep) == (not validator.violations(deep))
