"""Leaf schemas of the generator: strings, numbers, integers, enums, consts.

Keyword values are drawn so that every keyword can be violated on its own
(the oracle checks that and the generator redraws otherwise): one lower and
one upper bound at most, ranges several multiples wide, string lengths that
a pattern can both meet and miss.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from conformbench.jsontypes import JSONValue, Schema
from conformbench.schemas.config import FORMATS, GeneratorConfig, Keyword
from conformbench.schemas.words import WordPool

__all__ = ["Draw", "const_schema", "enum_schema", "number_schema", "string_schema"]

#: (pattern, shortest match length, fixed length)
_PATTERNS: tuple[tuple[str, int, bool], ...] = (
    ("^[a-z]+$", 1, False),
    ("^[A-Za-z]+$", 1, False),
    ("^[a-z]+(-[a-z]+)*$", 1, False),
    ("^[A-Z][a-z]+$", 2, False),
    ("^[a-z0-9_]+$", 1, False),
    ("^[0-9]+$", 1, False),
    ("^[a-f0-9]+$", 1, False),
    ("[aeiou]", 1, False),
    ("^[0-9]{3}-[0-9]{4}$", 8, True),
    ("^[A-Z]{2}[0-9]{4}$", 6, True),
    ("^#[0-9a-fA-F]{6}$", 7, True),
    ("^v[0-9]+\\.[0-9]+\\.[0-9]+$", 6, False),
)
_FLOAT_STEPS = (0.5, 0.25, 2.5, 1.5, 0.1)
_INT_STEPS = (2, 3, 5, 7, 10, 25)


@dataclass
class Draw:
    """The random state and preferences of one generator run."""

    rng: random.Random
    cfg: GeneratorConfig
    words: WordPool

    def chance(self, keyword: Keyword) -> bool:
        return self.rng.random() < self.cfg.keywords.get(keyword, 0.0)

    def weighted(self, names: tuple[str, ...], weights: dict[Any, float]) -> str:
        """A name drawn by weight, in the fixed order of ``names``."""
        pool = [(n, weights.get(n, 0.0)) for n in names if weights.get(n, 0.0) > 0]
        return self.rng.choices([n for n, _ in pool], [w for _, w in pool])[0]

    def number(self, low: float, high: float) -> float:
        """A float in [low, high], sometimes at full precision (as in the paper)."""
        value = self.rng.uniform(low, high)
        return value if self.rng.random() < 0.3 else round(value, self.rng.choice((1, 2, 2, 3)))


def string_schema(d: Draw) -> Schema:
    schema: Schema = {"type": "string"}
    if d.chance("format"):
        schema["format"] = d.weighted(FORMATS, d.cfg.formats)
        return schema
    shortest, fixed = 0, False
    if d.chance("pattern"):
        pattern, shortest, fixed = d.rng.choice(_PATTERNS)
        schema["pattern"] = pattern
    if fixed:
        return schema
    low = 0
    if d.chance("minLength"):
        low = d.rng.randint(shortest + 1, shortest + 8)
        schema["minLength"] = low
    if d.chance("maxLength"):
        schema["maxLength"] = d.rng.randint(max(low, shortest, 1) + 1, max(low, 4) + 40)
    return schema


def number_schema(d: Draw, integer: bool) -> Schema:
    schema: Schema = {"type": "integer" if integer else "number"}
    step: float | None = None
    if d.chance("multipleOf"):
        step = d.rng.choice(_INT_STEPS) if integer else d.rng.choice(
            (*_FLOAT_STEPS, round(d.rng.uniform(0.5, 20.0), 2))
        )
    width = max(8 * (step or 1), d.rng.randint(10, 1000) if integer else d.rng.uniform(5.0, 500.0))
    low: float = d.rng.randint(-100, 200) if integer else d.number(-1000.0, 1000.0)
    high: float = low + (int(width) if integer else round(width, 3))
    for lower, upper, value in (("minimum", "exclusiveMinimum", low), ("maximum", "exclusiveMaximum", high)):
        draw = d.rng.random()
        p_inclusive = d.cfg.keywords.get(lower, 0.0)  # type: ignore[call-overload]
        p_exclusive = d.cfg.keywords.get(upper, 0.0)  # type: ignore[call-overload]
        if draw < p_inclusive:
            schema[lower] = value
        elif draw < p_inclusive + p_exclusive:
            schema[upper] = value
    if step is not None:
        schema["multipleOf"] = step
    return schema


def _scalar_value(d: Draw, mode: str) -> JSONValue:
    if mode == "string":
        return d.rng.choice(d.words.names if d.rng.random() < 0.5 else d.words.lorem)
    if mode == "integer":
        return d.rng.randint(-50, 500)
    if mode == "number":
        return round(d.rng.uniform(-100, 100), 2)
    return d.rng.choice((True, False, None))


def enum_schema(d: Draw) -> Schema:
    size = d.rng.randint(*d.cfg.enum_size)
    mode = d.rng.choices(("string", "integer", "mixed"), (6, 2.5, 1.5))[0]
    values: list[JSONValue] = []
    seen: set[str] = set()
    while len(values) < size:
        kind = d.rng.choice(("string", "integer", "number", "other")) if mode == "mixed" else mode
        value = _scalar_value(d, kind)
        key = f"{type(value).__name__}:{value!r}"
        if key not in seen:
            seen.add(key)
            values.append(value)
    return {"enum": values}


def const_schema(d: Draw) -> Schema:
    kind = d.rng.choices(("string", "integer", "number", "other"), (5, 2, 2, 1))[0]
    return {"const": _scalar_value(d, kind)}
