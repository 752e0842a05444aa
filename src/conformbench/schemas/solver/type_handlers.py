"""Per-type candidate handlers of the solver, in a table keyed by JSON type
(after python-jsonschema's keyword table). Each reads the merged keywords
of a flattened conjunction and yields a few candidate values; the solver
checks them, so a handler only has to aim well, never to be exact."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

from conformbench.jsontypes import JSONValue
from conformbench.schemas.regexgen import regex_samples
from conformbench.schemas.solver.core import (
    MAX_SIZE,
    MISSING,
    MaybeJSON,
    Node,
    Solver,
    TypeHandler,
    Unsat,
    item_schema,
    naturals,
    tuple_length,
)
from conformbench.schemas.solver.object_handler import objects

__all__ = ["FORMAT_SAMPLES", "TYPE_HANDLERS", "as_number", "unique_key"]

#: values that pass python-jsonschema's format checker, varied in length
FORMAT_SAMPLES: dict[str, tuple[str, ...]] = {
    "date": ("2024-03-15", "1999-12-31", "2031-07-04"),
    "date-time": ("2024-03-15T09:30:00Z", "1999-12-31T23:59:59+01:00"),
    "time": ("09:30:00Z", "23:59:59+01:00"),
    "email": ("ada@example.com", "grace.hopper@navy.example.org", "a@b.io"),
    "idn-email": ("josé@example.com", "ada@example.com", "名前@例え.jp"),
    "uri": ("https://example.com/docs", "urn:isbn:0451450523", "http://a.io/x?y=1#z"),
    "uri-reference": ("/docs/index.html", "https://example.com/"),
    "iri": ("https://example.com/ü", "https://example.com/"),
    "iri-reference": ("/ü", "https://example.com/"),
    "uuid": ("123e4567-e89b-12d3-a456-426614174000", "00000000-0000-4000-8000-000000000000"),
    "ipv4": ("192.168.0.1", "10.0.0.254", "8.8.8.8"),
    "ipv6": ("::1", "2001:db8::ff00:42:8329"),
    "hostname": ("example.com", "db-1.internal"),
    "idn-hostname": ("example.com", "bücher.example"),
    "json-pointer": ("/a/b", ""),
    "relative-json-pointer": ("0/a", "1"),
    "regex": ("^[a-z]+$", "a+"),
    "uri-template": ("https://example.com/{id}",),
    "duration": ("P3D", "PT1H30M"),
}
_PLAIN = ("Zq9-X", "0000000000", "X-1 y_2.Z", "ÄÖÜ ß")


def as_number(value: float | Fraction) -> int | float:
    """An int when integral (JSON has one number type; ints read better)."""
    number = float(value)
    if math.isfinite(number) and number == int(number) and abs(number) < 2**53:
        return int(number)
    return number


def unique_key(value: JSONValue) -> str:
    """Equality as uniqueItems sees it: 1 == 1.0, but True != 1."""

    def norm(v: Any) -> Any:
        if isinstance(v, bool) or v is None or isinstance(v, str):
            return [type(v).__name__, v]
        if isinstance(v, (int, float)):
            return ["n", as_number(v)]
        if isinstance(v, list):
            return [norm(x) for x in v]
        return {k: norm(x) for k, x in v.items()}

    return json.dumps(norm(value), sort_keys=True)


# -- numbers ----------------------------------------------------------------


def _bounds(s: Solver, flat: list[Node]) -> tuple[Fraction | None, bool, Fraction | None, bool]:
    low: tuple[Fraction, bool] | None = None
    high: tuple[Fraction, bool] | None = None
    for key, exclusive, is_low in (
        ("minimum", False, True), ("exclusiveMinimum", True, True),
        ("maximum", False, False), ("exclusiveMaximum", True, False),
    ):
        for raw in s.values(flat, key):
            if isinstance(raw, bool) or not isinstance(raw, (int, float)):
                continue
            bound = (Fraction(raw), exclusive)
            if is_low and (low is None or bound[0] > low[0] or (bound[0] == low[0] and exclusive)):
                low = bound
            if not is_low and (high is None or bound[0] < high[0] or (bound[0] == high[0] and exclusive)):
                high = bound
    return (low[0] if low else None, bool(low and low[1]), high[0] if high else None, bool(high and high[1]))


def _in_range(v: Fraction, lo: Fraction | None, lx: bool, hi: Fraction | None, hx: bool) -> bool:
    return (lo is None or v > lo or (v == lo and not lx)) and (hi is None or v < hi or (v == hi and not hx))


def numbers(s: Solver, flat: list[Node], depth: int, kind: str) -> Iterator[JSONValue]:
    lo, lx, hi, hx = _bounds(s, flat)
    if lo is not None and hi is not None and (lo > hi or (lo == hi and (lx or hx))):
        raise Unsat("the numeric range is empty")
    integer = kind == "integer"
    mults = [Fraction(m) for m in s.values(flat, "multipleOf")
             if isinstance(m, (int, float)) and not isinstance(m, bool) and m > 0]
    if integer:
        mults.append(Fraction(1))
    cands = _multiples(s, mults, lo, lx, hi, hx) if mults else _plain_numbers(s, lo, lx, hi, hx)
    seen: set[Fraction] = set()
    for v in cands:
        if v not in seen and _in_range(v, lo, lx, hi, hx) and (not integer or v.denominator == 1):
            seen.add(v)
            yield as_number(v)


def _multiples(s: Solver, mults: list[Fraction], lo: Fraction | None, lx: bool,
               hi: Fraction | None, hx: bool) -> Iterator[Fraction]:
    step = mults[0]
    for m in mults[1:]:  # least common multiple of rationals
        step = Fraction(math.lcm(step.numerator * m.denominator, m.numerator * step.denominator),
                        step.denominator * m.denominator)
    k_lo = None if lo is None else math.ceil(lo / step) + (1 if lx and (lo / step).denominator == 1 else 0)
    k_hi = None if hi is None else math.floor(hi / step) - (1 if hx and (hi / step).denominator == 1 else 0)
    if k_lo is not None and k_hi is not None:
        if k_lo > k_hi:
            raise Unsat("no multiple of multipleOf lies in the numeric range")
        ks = [s.rng.randint(k_lo, min(k_hi, k_lo + 6)), k_lo, k_hi, (k_lo + k_hi) // 2]
    elif k_lo is not None:
        ks = [k_lo + s.rng.randint(0, 4), k_lo, k_lo + 1]
    elif k_hi is not None:
        ks = [k_hi - s.rng.randint(0, 4), k_hi, k_hi - 1]
    else:
        ks = [s.rng.randint(1, 12), 1, 0, 2, -1]
    for k in ks:
        yield k * step
    yield from _plain_numbers(s, lo, lx, hi, hx)  # for 'not multipleOf'


def _plain_numbers(s: Solver, lo: Fraction | None, lx: bool,
                   hi: Fraction | None, hx: bool) -> Iterator[Fraction]:
    a = lo if lo is not None else (hi - 100 if hi is not None else Fraction(0))
    b = hi if hi is not None else a + 100
    pick = Fraction(round(s.rng.uniform(float(a), float(b)), 2)).limit_denominator(100)
    mid = (a + b) / 2
    yield from (Fraction(math.floor(pick)), pick, Fraction(math.ceil(mid)), mid)
    yield from (a + 1, b - 1, a + Fraction(1, 2), a + (b - a) / 3, Fraction(0), Fraction(1), a, b)
    if lo is not None:
        yield lo + Fraction(1, 1000)
    if hi is not None:
        yield hi - Fraction(1, 1000)


# -- strings ----------------------------------------------------------------


def strings(s: Solver, flat: list[Node], depth: int, kind: str) -> Iterator[JSONValue]:
    lo = max(naturals(s, flat, "minLength"), default=0)
    hi = min(naturals(s, flat, "maxLength"), default=None)
    if hi is not None and lo > hi:
        raise Unsat("minLength is above maxLength")
    if lo > MAX_SIZE:
        s.note(f"minLength {lo} is beyond what the solver builds")
        return
    for fmt in s.values(flat, "format"):
        for sample in FORMAT_SAMPLES.get(str(fmt), ()):
            if lo <= len(sample) and (hi is None or len(sample) <= hi):
                yield sample
    patterns = [p for p in s.values(flat, "pattern") if isinstance(p, str)]
    if patterns:
        yield from regex_samples(patterns[0], s.rng, lo, hi)
    top = hi if hi is not None else max(lo, 6) + 24
    yield s.text(lo, min(top, lo + 24))
    for plain in _PLAIN:
        text = (plain * (lo // len(plain) + 1))[: max(lo, min(len(plain), top))]
        yield text
    yield "a" * lo


def booleans(s: Solver, flat: list[Node], depth: int, kind: str) -> Iterator[JSONValue]:
    first = s.rng.random() < 0.5
    yield first
    yield not first


def nulls(s: Solver, flat: list[Node], depth: int, kind: str) -> Iterator[JSONValue]:
    yield None


# -- arrays -----------------------------------------------------------------


def _position(s: Solver, flat: list[Node], i: int) -> list[Node]:
    nodes: list[Node] = []
    for node in flat:
        sub = item_schema(node.schema, i)
        if sub is not None:
            nodes.append(node.child(sub))
    return nodes


def arrays(s: Solver, flat: list[Node], depth: int, kind: str) -> Iterator[JSONValue]:
    min_items = max(naturals(s, flat, "minItems"), default=0)
    max_items = min(naturals(s, flat, "maxItems"), default=None)
    contains = s.nodes_for(flat, "contains")
    min_c = max(naturals(s, flat, "minContains"), default=1) if contains else 0
    max_c = min(naturals(s, flat, "maxContains"), default=None) if contains else None
    if max_items is not None and min_items > max_items:
        raise Unsat("minItems is above maxItems")
    if max_c is not None and min_c > max_c:
        raise Unsat("minContains is above maxContains")
    if max_items is not None and min_c > max_items:
        raise Unsat("minContains is above maxItems")
    need = max(min_items, min_c)
    if need > MAX_SIZE // 10:
        s.note(f"{need} items are beyond what the solver builds")
        return
    room = need + s.rng.randint(0, 2)
    past_prefix = max((tuple_length(n.schema) for n in flat), default=0)
    lengths = [n for n in dict.fromkeys([room, need, need + 1, need + 2, min_c + past_prefix])
               if max_items is None or n <= max_items]
    unique = any(v is True for v in s.values(flat, "uniqueItems"))
    for n in lengths:
        for matches_first in (False, True):
            try:
                built = _build_array(s, flat, depth, n, (contains, min_c, max_c), unique, matches_first)
            except Unsat as exc:
                s.note(str(exc))
                continue
            if built is not MISSING:
                yield built


def _build_array(s: Solver, flat: list[Node], depth: int, n: int,
                 contain: tuple[list[Node], int, int | None], unique: bool,
                 matches_first: bool) -> MaybeJSON:
    contains, min_c, max_c = contain
    match_at = set(range(min_c)) if matches_first else set(range(n - min_c, n))
    # 'not: {contains: X}' (a negated contains) is aimed at: no element matches X
    banned = [n.child(n.schema["not"]["contains"]) for n in flat
              if isinstance(n.get("not"), dict) and "contains" in n.schema["not"]]
    out: list[JSONValue] = []
    used: set[str] = set()
    for i in range(n):
        nodes = _position(s, flat, i) + (contains if i in match_at else [])
        avoid = contains if (contains and max_c is not None and i not in match_at) else []
        avoid = [*avoid, *banned]
        value = _pick(s, nodes, depth, used if unique else None, avoid)
        if value is MISSING:
            return MISSING
        out.append(value)
        used.add(unique_key(value))
    return out


def _pick(s: Solver, nodes: list[Node], depth: int, used: set[str] | None,
          avoid: list[Node]) -> MaybeJSON:
    """The first or second acceptable candidate (varied arrays read better)."""
    skip = s.rng.randint(0, 1)
    found: MaybeJSON = MISSING
    for count, value in enumerate(s.solve(nodes, depth + 1)):
        if count > 24:
            break
        if used is not None and unique_key(value) in used:
            continue
        if any(s.valid(a, value) for a in avoid):
            continue
        if found is MISSING:
            found = value
        if skip == 0:
            return value
        skip -= 1
    return found


#: the solver's candidates per JSON type (``Solver(validator, TYPE_HANDLERS)``)
TYPE_HANDLERS: dict[str, TypeHandler] = {
    "integer": numbers,
    "number": numbers,
    "string": strings,
    "boolean": booleans,
    "null": nulls,
    "array": arrays,
    "object": objects,
}
