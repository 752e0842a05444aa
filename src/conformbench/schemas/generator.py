"""The combinatorial schema generator (ConCodeEval's dataset tool, redone).

Draws JSON Schemas (draft 2020-12) from the weights and probabilities of a
GeneratorConfig with one seeded ``random.Random``: same seed and config, same
schemas. A drawn schema is kept only if it passes its metaschema and the
oracle finds a valid instance and a single-keyword violation for every
constraint in it; otherwise it is redrawn from the same stream.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

from conformbench.errors import UsageError
from conformbench.jsontypes import JSONValue, Schema
from conformbench.schemas.case import InvalidInstance
from conformbench.schemas.config import SCHEMA_KINDS, GeneratorConfig
from conformbench.schemas.leaves import (
    Draw,
    const_schema,
    enum_schema,
    number_schema,
    string_schema,
)
from conformbench.schemas.oracle import find_invalid, find_valid
from conformbench.schemas.words import word_pool

__all__ = ["SCHEMA_URI", "GeneratedSchema", "draw_schema", "generate"]

SCHEMA_URI = "https://json-schema.org/draft/2020-12/schema"
_COMPOSITE = ("object", "array")
_MAX_REDRAWS = 200
#: prefixes no generated property name has (names are lower-case letters only)
_NAME_PATTERNS = ("^x_", "^[A-Z]{2}_", "^meta_", "^[0-9]+$", "_id$")


@dataclass(frozen=True)
class GeneratedSchema:
    schema: Schema
    valid_instance: JSONValue
    invalid_instances: tuple[InvalidInstance, ...]
    #: rejected draws before this one was kept
    redraws: int


def _kind(d: Draw, weights: dict[str, float], depth: int) -> str:
    kinds = SCHEMA_KINDS if depth < d.cfg.max_depth else tuple(
        k for k in SCHEMA_KINDS if k not in _COMPOSITE
    )
    if not any(weights.get(k, 0) > 0 for k in kinds):
        kinds = tuple(k for k in SCHEMA_KINDS if k not in _COMPOSITE)
        weights = {k: 1.0 for k in kinds}
    return d.weighted(kinds, weights)


def _build(d: Draw, kind: str, depth: int) -> Schema:
    if kind == "object":
        return _object(d, depth)
    if kind == "array":
        return _array(d, depth)
    if kind == "string":
        return string_schema(d)
    if kind in ("number", "integer"):
        return number_schema(d, kind == "integer")
    if kind == "enum":
        return enum_schema(d)
    if kind == "const":
        return const_schema(d)
    if kind == "any":
        return {}
    return {"type": kind}


def _child(d: Draw, depth: int) -> Schema:
    return _build(d, _kind(d, {str(k): w for k, w in d.cfg.value_kinds.items()}, depth + 1), depth + 1)


def _object(d: Draw, depth: int) -> Schema:
    schema: Schema = {"type": "object"}
    low, high = d.cfg.root_properties if depth == 1 else d.cfg.nested_properties
    names: list[str] = []
    if d.chance("properties") and high > 0:
        taken: set[str] = set()
        names = [d.words.name(d.rng, taken) for _ in range(d.rng.randint(max(low, 1), high))]
        schema["properties"] = {name: _child(d, depth) for name in names}
    if d.chance("patternProperties"):
        schema["patternProperties"] = {d.rng.choice(_NAME_PATTERNS): _child(d, depth)}
    if d.chance("additionalProperties"):
        choice = d.rng.choices(("false", "true", "schema"), (5, 2, 3))[0]
        schema["additionalProperties"] = _child(d, depth) if choice == "schema" else choice == "true"
    required: list[str] = []
    if names and d.chance("required"):
        picked = set(d.rng.sample(names, d.rng.randint(0, len(names))))
        required = [n for n in names if n in picked]
        schema["required"] = required
    optional = [n for n in names if n not in required]
    slack = 0
    if len(names) >= 2 and optional and d.chance("dependentRequired"):
        dep = d.rng.choice(optional)
        trigger = d.rng.choice([n for n in names if n != dep])
        schema["dependentRequired"] = {trigger: [dep]}
            # a required trigger adds its dependency; an optional one, once added
        # to break a keyword inside it, brings the dependency along
        required = [*required, dep] if trigger in required else required
        slack = 0 if trigger in required else 1
    _property_counts(d, schema, len(names), len(required) + slack)
    return _maybe_shuffle(d, schema)


def _property_counts(d: Draw, schema: Schema, declared: int, required: int) -> None:
    """minProperties above the required count (so dropping an optional
    property can break it); maxProperties with room for one more property
    (so a single added property can break other keywords alone), and below
    what the schema admits (so adding one can break it)."""
    open_names = "patternProperties" in schema or schema.get("additionalProperties", True) is not False
    smallest = 0
    # a closed object needs a spare declared name to stand in for a dropped one
    most = declared if open_names else declared - 1
    if most > required and d.chance("minProperties"):
        smallest = d.rng.randint(required + 1, most)
        schema["minProperties"] = smallest
    floor = max(smallest, required + 1)
    top = declared + 1 if open_names else declared - 1
    if top >= floor and d.chance("maxProperties"):
        schema["maxProperties"] = d.rng.randint(floor, top)


def _array(d: Draw, depth: int) -> Schema:
    schema: Schema = {"type": "array"}
    if d.chance("prefixItems"):
        schema["prefixItems"] = [_child(d, depth) for _ in range(d.rng.randint(*d.cfg.prefix_items))]
    if d.chance("items"):
        schema["items"] = _child(d, depth)
    elif "prefixItems" in schema and d.rng.random() < 0.3:
        schema["items"] = False  # a closed tuple: no contains or size bounds on top
        return _maybe_shuffle(d, schema)
    min_c = 1
    contains = _contains(d, schema.get("items", {})) if d.chance("contains") else None
    if contains is not None:
        schema["contains"] = contains
        if d.chance("minContains"):
            min_c = d.rng.randint(2, 3)
            schema["minContains"] = min_c
        if d.chance("maxContains"):
            schema["maxContains"] = d.rng.randint(min_c, min_c + 3)
    # a shorter array must still hold minContains matches after the prefix
    base = min_c + len(schema.get("prefixItems", ())) + 1 if contains is not None else 1
    low = 0
    if d.chance("minItems"):
        low = d.rng.randint(base, base + 3)
        schema["minItems"] = low
    unique = _roomy(schema.get("items", {})) and _roomy(contains or {}) and d.chance("uniqueItems")
    if d.chance("maxItems"):
        # room for one element past the prefix, and for a duplicate
        floor = max(low, min_c, len(schema.get("prefixItems", ())) + 1, 2 if unique else 1,
                    schema.get("maxContains", 0) + 1)
        schema["maxItems"] = d.rng.randint(floor, floor + 4)
    if unique:
        schema["uniqueItems"] = True
    return _maybe_shuffle(d, schema)


def _roomy(items: Schema) -> bool:
    """Items with many distinct values (uniqueItems cannot starve them)."""
    return "enum" not in items and "const" not in items and items.get("type") not in ("boolean", "null")


def _contains(d: Draw, items: Schema) -> Schema | None:
    """A schema that some valid items match and others miss, or None."""
    kind = items.get("type")
    if not items:
        kind = d.rng.choice(("string", "number", "integer", "boolean"))
        if kind == "boolean":
            return {"type": "boolean"}
        return _narrowed({"type": kind}, d)
    if "enum" in items and len(items["enum"]) > 1:
        return {"const": items["enum"][0]}
    if kind in ("string", "number", "integer") and "format" not in items and "pattern" not in items:
        return _narrowed(items, d)
    return None


def _narrowed(items: Schema, d: Draw) -> Schema:
    """Part of the items' range: the upper part of a numeric range, the
    longer part of a string length range."""
    kind = items["type"]
    if kind == "string":
        shortest: int = items.get("minLength", 0)
        longest: int = items.get("maxLength", shortest + 20)
        return {"type": "string", "minLength": (shortest + longest) // 2 + 1}
    low: float | None = items.get("minimum", items.get("exclusiveMinimum"))
    high: float | None = items.get("maximum", items.get("exclusiveMaximum"))
    if high is None:
        base = d.rng.randint(-20, 50) if low is None else low
        mid = base + 20
    else:
        base = high - 50 if low is None else low
        mid = base + (high - base) / 2
    bound = int(mid) if kind == "integer" else round(mid, 2)
    return {"type": kind, "minimum": bound}


def _maybe_shuffle(d: Draw, schema: Schema) -> Schema:
    """Constraints sit at varied positions (the paper's position analysis),
    so keywords after ``type`` are sometimes reordered."""
    if d.rng.random() >= 0.3:
        return schema
    rest = list(schema)[1:]
    d.rng.shuffle(rest)
    return {"type": schema["type"], **{k: schema[k] for k in rest}}


def draw_schema(d: Draw) -> Schema:
    kind = d.weighted(SCHEMA_KINDS, dict(d.cfg.root_kinds))
    schema = _build(d, kind, 1)
    return {"$schema": SCHEMA_URI, **schema} if d.cfg.schema_uri else schema


def generate(n: int, seed: int, cfg: GeneratorConfig) -> Iterator[GeneratedSchema]:
    """``n`` schemas, each with its oracle instances, deterministic for
    (n, seed, cfg)."""
    d = Draw(random.Random(seed), cfg, word_pool())
    for _ in range(n):
        for redraw in range(_MAX_REDRAWS):
            schema = draw_schema(d)
            kept = _with_instances(schema, redraw)
            if kept is not None:
                yield kept
                break
        else:
            raise UsageError(
                f"the generator config yields no usable schema in {_MAX_REDRAWS} draws; "
                "loosen its keyword probabilities"
            )


def _with_instances(schema: Schema, redraws: int) -> GeneratedSchema | None:
    valid = find_valid(schema)
    if not valid.found:
        return None
    invalid = find_invalid(schema, valid.instance)
    if invalid.unisolated:
        return None
    return GeneratedSchema(schema, valid.instance, tuple(invalid.instances), redraws)
