"""The object handler of the solver: choose property names (required ones,
dependentRequired closure, enough to reach minProperties, some optional ones
for variety), then solve each value against every subschema that applies to
that name (properties, matching patternProperties, else
additionalProperties)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field

from conformbench.jsontypes import JSONValue
from conformbench.schemas.regexgen import regex_samples
from conformbench.schemas.solver.core import MAX_SIZE, MISSING, MaybeJSON, Node, Solver, Unsat, naturals
from conformbench.validator.patterns import matches

__all__ = ["drop_optional", "objects", "value_nodes"]


def _search(pattern: str, name: str) -> bool:
    """Bounded (RE2, or a timed fallback); an undecided match is no match."""
    return isinstance(pattern, str) and matches(pattern, name)


def value_nodes(flat: list[Node], name: str) -> list[Node]:
    """The subschemas that apply to property ``name`` (in scope)."""
    out: list[Node] = []
    for node in flat:
        props = node.get("properties")
        matched = False
        if isinstance(props, dict) and name in props:
            out.append(node.child(props[name]))
            matched = True
        patterns = node.get("patternProperties")
        for regex, sub in (patterns.items() if isinstance(patterns, dict) else ()):
            if _search(regex, name):
                out.append(node.child(sub))
                matched = True
        if not matched and "additionalProperties" in node.schema:
            out.append(node.child(node.schema["additionalProperties"]))
    return out


def drop_optional(node: Node, value: dict[str, JSONValue], keep: str) -> Iterator[dict[str, JSONValue]]:
    """``value`` less one property that the node does not require (not ``keep``)."""
    required = set(node.get("required") or ())
    for name in value:
        if name not in required and name != keep:
            yield {k: v for k, v in value.items() if k != name}
    yield {k: v for k, v in value.items() if k in required or k == keep}


@dataclass
class _View:
    declared: list[str] = field(default_factory=list)
    required: list[str] = field(default_factory=list)
    patterns: list[str] = field(default_factory=list)
    dependent: list[tuple[str, list[str]]] = field(default_factory=list)
    min_p: int = 0
    max_p: int | None = None

    @classmethod
    def of(cls, s: Solver, flat: list[Node]) -> _View:
        view = cls()
        for node in flat:
            props = node.get("properties")
            view.declared += [k for k in (props if isinstance(props, dict) else ()) if k not in view.declared]
            req = node.get("required")
            view.required += [k for k in (req if isinstance(req, list) else ()) if k not in view.required]
            pats = node.get("patternProperties")
            view.patterns += [p for p in (pats if isinstance(pats, dict) else ()) if p not in view.patterns]
            deps = node.get("dependentRequired")
            view.dependent += [(k, list(v)) for k, v in (deps.items() if isinstance(deps, dict) else ())]
        view.min_p = max(naturals(s, flat, "minProperties"), default=0)
        view.max_p = min(naturals(s, flat, "maxProperties"), default=None)
        return view


def objects(s: Solver, flat: list[Node], depth: int, kind: str) -> Iterator[JSONValue]:
    view = _View.of(s, flat)
    # choosing keys looks up every declared name in every node
    s.charge(len(flat) * (1 + len(view.declared)))
    if view.max_p is not None and max(view.min_p, len(view.required)) > view.max_p:
        raise Unsat("more properties are required than maxProperties allows")
    if view.min_p > MAX_SIZE // 10:
        s.note(f"minProperties {view.min_p} is beyond what the solver builds")
        return
    for name in view.required:
        if any(n.schema is False for n in value_nodes(flat, name)):
            raise Unsat(f"required property {name!r} is forbidden")
    # optional properties for variety near the top only: deep down (recursive
    # schemas such as the metaschema) they would multiply the search
    variants = ("rich", "minimal", "extra") if depth < 3 else ("minimal", "extra")
    for variant in variants:
        keys = _choose_keys(s, flat, view, variant == "rich")
        if variant == "extra":  # an undeclared property ('not', unevaluatedProperties)
            keys += list(itertools.islice(_extra_names(s, flat, view, keys), 1))
        built = _fill(s, flat, view, keys, depth)
        if built is not MISSING:
            yield built


#: optional properties a "rich" instance adds at most
_RICH_EXTRA = 5


def _closure(keys: list[str], view: _View) -> list[str]:
    changed = True
    while changed:
        changed = False
        for name, deps in view.dependent:
            if name in keys:
                for dep in deps:
                    if dep not in keys:
                        keys.append(dep)
                        changed = True
    return keys


def _choose_keys(s: Solver, flat: list[Node], view: _View, rich: bool) -> list[str]:
    keys = _closure(list(view.required), view)
    cap = view.max_p if view.max_p is not None else len(view.declared) + len(keys)
    optional = [k for k in view.declared if k not in keys]
    allowed = [k for k in optional if all(n.schema is not False for n in value_nodes(flat, k))]
    spare = _RICH_EXTRA
    for name in allowed:
        if len(keys) >= cap:
            break
        if len(keys) < view.min_p:
            keys = _closure([*keys, name], view)
        elif rich and spare > 0 and s.rng.random() < 0.5:
            spare -= 1
            keys = _closure([*keys, name], view)
    extras = _extra_names(s, flat, view, keys)
    while len(keys) < view.min_p:
        extra = next(extras, None)
        if extra is None:
            break
        keys.append(extra)
    return keys


def _extra_names(s: Solver, flat: list[Node], view: _View, taken: list[str]) -> Iterator[str]:
    """Undeclared names that the schema lets in (pattern-matching first)."""
    from conformbench.schemas.words import word_pool

    name_nodes = s.nodes_for(flat, "propertyNames")
    pool = word_pool().names

    def candidates() -> Iterator[str]:
        for regex in view.patterns:
            yield from regex_samples(regex, s.rng, 1, 24)
        for _ in range(60):
            yield s.rng.choice(pool)
        yield from ("x", "a", "0", "extra", "key_1")

    for name in candidates():
        if name in taken or name in view.declared:
            continue
        if any(n.schema is False for n in value_nodes(flat, name)):
            continue
        if all(s.valid(n, name) for n in name_nodes):
            taken = [*taken, name]
            yield name


def _fill(s: Solver, flat: list[Node], view: _View, keys: list[str], depth: int) -> MaybeJSON:
    values: dict[str, JSONValue] = {}
    for name in keys:
        try:
            value = s.first(value_nodes(flat, name), depth + 1)
        except Unsat:
            if name in view.required:
                raise
            value = MISSING
        if value is MISSING:
            if name in view.required:
                return MISSING
            continue
        values[name] = value
    order = [k for k in view.declared if k in values] + [k for k in values if k not in view.declared]
    return {k: values[k] for k in order}
