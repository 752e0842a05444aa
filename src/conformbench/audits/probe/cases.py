"""Hand-made probe schemas, one per JSON Schema keyword, each with prompts
that nudge the model to violate that keyword. If the engine enforces the
keyword the output still satisfies it; if the engine drops it silently, a
nudged model writes a violation that full-schema validation then catches."""

from __future__ import annotations

from dataclasses import dataclass

from conformbench.jsontypes import Schema

__all__ = ["PROBE_CASES", "ProbeCase"]


@dataclass(frozen=True)
class ProbeCase:
    keyword: str
    schema: Schema
    #: nudging prompts; the probe takes the first K (cycling if K is larger)
    prompts: tuple[str, ...]


def _obj(name: str, prop: Schema) -> Schema:
    """An object with one required property: small, and every engine can
    compile the structure around the keyword under test."""
    return {
        "type": "object",
        "properties": {name: prop},
        "required": [name],
        "additionalProperties": False,
    }


def _ask(field: str, value: str) -> tuple[str, ...]:
    return (
        f'Return a JSON object whose "{field}" is {value}.',
        f'Write JSON. Set "{field}" to {value}, exactly as given.',
        f'Output only JSON: {{"{field}": {value}}}',
    )


PROBE_CASES: tuple[ProbeCase, ...] = (
    ProbeCase("type", _obj("n", {"type": "integer"}), _ask("n", "12.5")),
    ProbeCase("minimum", _obj("n", {"type": "integer", "minimum": 100}), _ask("n", "3")),
    ProbeCase("maximum", _obj("n", {"type": "integer", "maximum": 10}), _ask("n", "5000")),
    ProbeCase(
        "exclusiveMinimum", _obj("n", {"type": "integer", "exclusiveMinimum": 50}), _ask("n", "50")
    ),
    ProbeCase(
        "exclusiveMaximum", _obj("n", {"type": "integer", "exclusiveMaximum": 5}), _ask("n", "5")
    ),
    ProbeCase("multipleOf", _obj("n", {"type": "integer", "multipleOf": 7}), _ask("n", "10")),
    ProbeCase("minLength", _obj("name", {"type": "string", "minLength": 25}), _ask("name", '"Al"')),
    ProbeCase(
        "maxLength",
        _obj("name", {"type": "string", "maxLength": 3}),
        _ask("name", '"Alexander the Great"'),
    ),
    ProbeCase(
        "pattern",
        _obj("code", {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{4}$"}),
        _ask("code", '"hello world"'),
    ),
    ProbeCase(
        "format", _obj("email", {"type": "string", "format": "email"}), _ask("email", '"not available"')
    ),
    ProbeCase("enum", _obj("color", {"enum": ["red", "green"]}), _ask("color", '"purple"')),
    ProbeCase("const", _obj("version", {"const": "v2"}), _ask("version", '"v1"')),
    ProbeCase(
        "minItems",
        _obj("tags", {"type": "array", "items": {"type": "string"}, "minItems": 4}),
        _ask("tags", '["x"]'),
    ),
    ProbeCase(
        "maxItems",
        _obj("tags", {"type": "array", "items": {"type": "string"}, "maxItems": 2}),
        _ask("tags", '["a", "b", "c", "d", "e"]'),
    ),
    ProbeCase(
        "uniqueItems",
        _obj("tags", {"type": "array", "items": {"type": "string"}, "uniqueItems": True}),
        _ask("tags", '["a", "a", "a"]'),
    ),
    ProbeCase(
        "contains",
        _obj("numbers", {"type": "array", "items": {"type": "integer"}, "contains": {"const": 42}}),
        _ask("numbers", "[1, 2, 3]"),
    ),
    ProbeCase(
        "required",
        {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
        _ask("a", "1 and nothing else"),
    ),
    ProbeCase(
        "additionalProperties",
        _obj("a", {"type": "integer"}),
        _ask("a", '1 and "extra" is 2'),
    ),
    ProbeCase(
        "minProperties",
        {"type": "object", "additionalProperties": {"type": "integer"}, "minProperties": 3},
        _ask("x", "1 and no other key"),
    ),
    ProbeCase(
        "maxProperties",
        {"type": "object", "additionalProperties": {"type": "integer"}, "maxProperties": 1},
        _ask("a", '1, "b" is 2 and "c" is 3'),
    ),
    ProbeCase(
        "not",
        _obj("n", {"type": "integer", "not": {"const": 0}}),
        _ask("n", "0"),
    ),
)
