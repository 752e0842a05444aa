"""python-jsonschema keyword functions that match patterns through
``patterns.search`` (RE2, or the timed fallback) instead of Python's ``re``:
``pattern``, ``patternProperties``, and the two keywords that consult
``patternProperties`` to know which properties are left over,
``additionalProperties`` and ``unevaluatedProperties``; and ``multipleOf``,
which answers where python-jsonschema's float division overflows (an integer
past 1e308 from model output raised OverflowError). Installed with
``jsonschema.validators.extend``; the rest of each draft is untouched.

A match the fallback engine could not decide in time (PatternTimeout) counts
as no match, and where that decides the outcome the error says so. A pattern
that neither engine compiles matches nothing (the metaschema check has
already rejected it where the draft says patterns are regular expressions).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from fractions import Fraction
from typing import Any

import attrs
from jsonschema import validators
from jsonschema.exceptions import ValidationError
from jsonschema.protocols import Validator
from referencing.jsonschema import lookup_recursive_ref

from conformbench.validator.patterns import matches as _matches

__all__ = ["bounded_class"]

Keyword = Callable[[Any, Any, Any, Any], Iterator[ValidationError]]


def pattern(validator: Any, patrn: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "string"):
        return
    undecided: list[str] = []
    if not _matches(patrn, instance, undecided):
        why = f" ({undecided[0]})" if undecided else ""
        yield ValidationError(f"{instance!r} does not match {patrn!r}{why}")


def multiple_of(validator: Any, divisor: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    """python-jsonschema's arithmetic (the reference's answer wherever it has
    one), except that an overflowing float division is decided exactly, with
    the divisor as the decimal the schema wrote (``0.01``, not its binary
    neighbour). No infinity or NaN is a multiple of anything."""
    if not validator.is_type(instance, "number"):
        return
    if isinstance(divisor, float):
        try:
            quotient = instance / divisor
            failed = int(quotient) != quotient
        except OverflowError:
            failed = not _exact_multiple(instance, divisor)
    else:
        failed = bool(instance % divisor)
    if failed:
        yield ValidationError(f"{_short(instance)} is not a multiple of {divisor}")


def _exact_multiple(instance: int | float, divisor: float) -> bool:
    if isinstance(instance, float) and not math.isfinite(instance):
        return False
    return Fraction(instance) % Fraction(repr(divisor)) == 0


def _short(number: int | float) -> str:
    """A number for a message: a huge integer by its size, not its digits."""
    if isinstance(number, int) and abs(number) >= 10**30:
        return f"an integer of {len(str(abs(number)))} digits"
    return repr(number)


def pattern_properties(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for patrn, subschema in value.items():
        for key, item in instance.items():
            if _matches(patrn, key):
                yield from validator.descend(item, subschema, path=key, schema_path=patrn)


def _additional(instance: Any, schema: Any, undecided: list[str] | None = None) -> list[str]:
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    return [key for key in instance
            if key not in properties and not any(_matches(p, key, undecided) for p in patterns)]


def additional_properties(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    undecided: list[str] = []
    extras = _additional(instance, schema, undecided)
    if validator.is_type(value, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], value, path=extra)
    elif not value and extras:
        why = f" ({undecided[0]})" if undecided else ""
        if "patternProperties" in schema:
            verb = "does" if len(extras) == 1 else "do"
            joined = ", ".join(repr(each) for each in sorted(extras))
            patterns = ", ".join(repr(each) for each in sorted(schema["patternProperties"]))
            yield ValidationError(f"{joined} {verb} not match any of the regexes: {patterns}{why}")
        else:
            names = ", ".join(repr(e) for e in sorted(extras, key=str))
            verb = "was" if len(extras) == 1 else "were"
            yield ValidationError(f"Additional properties are not allowed ({names} {verb} unexpected)")


def _valid(errors: Iterator[ValidationError]) -> bool:
    return next(errors, None) is None


def _follow(validator: Any, instance: Any, resolved: Any, legacy: bool) -> list[str]:
    sub = validator.evolve(schema=resolved.contents, _resolver=resolved.resolver)
    return _evaluated(sub, instance, resolved.contents, legacy)


def _evaluated(validator: Any, instance: Any, schema: Any, legacy: bool) -> list[str]:
    """The property names that ``schema`` evaluates (python-jsonschema's
    ``find_evaluated_property_keys_by_schema``, and with ``legacy`` its
    2019-09 variant, with pattern matching bounded)."""
    if validator.is_type(schema, "boolean"):
        return []
    keys: list[str] = []
    for ref_keyword in ("$ref", "$dynamicRef"):
        if schema.get(ref_keyword) is not None and (ref_keyword == "$ref" or not legacy):
            keys += _follow(validator, instance, validator._resolver.lookup(schema[ref_keyword]), legacy)
    if legacy and "$recursiveRef" in schema:
        keys += _follow(validator, instance, lookup_recursive_ref(validator._resolver), legacy)
    keys += _own_keys(validator, instance, schema, legacy)
    for key in instance if "patternProperties" in schema else ():
        keys += [key for p in schema["patternProperties"] if _matches(p, key)]
    for key, subschema in schema.get("dependentSchemas", {}).items():
        if key in instance:
            keys += _evaluated(validator, instance, subschema, legacy)
    for keyword in ("allOf", "oneOf", "anyOf"):
        for subschema in schema.get(keyword, []):
            if _valid(validator.descend(instance, subschema)):
                keys += _evaluated(validator, instance, subschema, legacy)
    if "if" in schema:
        if validator.evolve(schema=schema["if"]).is_valid(instance):
            keys += _evaluated(validator, instance, schema["if"], legacy)
            if "then" in schema:
                keys += _evaluated(validator, instance, schema["then"], legacy)
        elif "else" in schema:
            keys += _evaluated(validator, instance, schema["else"], legacy)
    return keys


def _own_keys(validator: Any, instance: Any, schema: Any, legacy: bool) -> list[str]:
    keys: list[str] = []
    if legacy:
        for keyword in ("properties", "additionalProperties", "unevaluatedProperties"):
            value = schema.get(keyword)
            if value is True:
                keys += instance.keys()
            elif validator.is_type(value, "object"):
                keys += [key for key in value if key in instance]
        return keys
    properties = schema.get("properties")
    if validator.is_type(properties, "object"):
        keys += properties.keys() & instance.keys()
    for keyword in ("additionalProperties", "unevaluatedProperties"):
        if (subschema := schema.get(keyword)) is not None:
            keys += [key for key, v in instance.items() if _valid(validator.descend(v, subschema))]
    return keys


def _unevaluated(legacy: bool) -> Keyword:
    def unevaluated_properties(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
        if not validator.is_type(instance, "object"):
            return
        evaluated = set(_evaluated(validator, instance, schema, legacy))
        bad = [key for key in instance if key not in evaluated
               and not _valid(validator.descend(instance[key], value, path=key, schema_path=key))]
        if not bad:
            return
        verb = "was" if len(bad) == 1 else "were"
        if value is False:
            names = ", ".join(repr(e) for e in sorted(bad, key=str))
            yield ValidationError(f"Unevaluated properties are not allowed ({names} {verb} unexpected)")
        else:
            names = ", ".join(repr(e) for e in bad)
            yield ValidationError("Unevaluated properties are not valid under the given schema "
                                  f"({names} {verb} unevaluated and invalid)")

    return unevaluated_properties


_BOUNDED: dict[type[Validator], type[Validator]] = {}


def bounded_class(cls: type[Validator]) -> type[Validator]:
    """``cls`` with every pattern match bounded (see the module docstring);
    one class per draft, built once."""
    if cls in _BOUNDED.values():
        return cls
    if cls not in _BOUNDED:
        bounded = _extend(cls)
        bounded.evolve = _evolve
        _BOUNDED[cls] = bounded
    return _BOUNDED[cls]


#: (attribute, init argument) of every validator field, per class
_FIELDS: dict[type[Any], list[tuple[str, str]]] = {}


def _evolve(self: Any, **changes: Any) -> Any:
    """python-jsonschema's ``evolve``, except that a subschema naming
    another draft in ``$schema`` (or the root, reached by ``$ref``) gets
    that draft's bounded class, not the library's own."""
    cls = type(self)
    schema = changes.setdefault("schema", self.schema)
    if isinstance(schema, dict) and "$schema" in schema:
        cls = bounded_class(validators.validator_for(schema, default=cls))
    fields = _FIELDS.get(type(self))
    if fields is None:
        fields = _FIELDS[type(self)] = [(f.name, f.alias) for f in attrs.fields(type(self)) if f.init]
    for name, alias in fields:
        if alias not in changes:
            changes[alias] = getattr(self, name)
    return cls(**changes)


def _extend(cls: type[Validator]) -> type[Validator]:
    replaced: dict[str, Keyword] = {
        "pattern": pattern,
        "patternProperties": pattern_properties,
        "additionalProperties": additional_properties,
        "multipleOf": multiple_of,
    }
    if "unevaluatedProperties" in cls.VALIDATORS:
        legacy = "$recursiveRef" in cls.VALIDATORS
        replaced["unevaluatedProperties"] = _unevaluated(legacy)
    return validators.extend(cls, replaced)  # type: ignore[no-any-return]
