"""Source snippets that generated Pydantic modules include when they use them.

Each snippet covers one JSON Schema rule that ``Field`` cannot state, or a
place where Python's data model differs from JSON's (``True == 1``,
``1.0`` counting as an integer). Generated modules stay self-contained:
they import only pydantic, the standard library and (for ``format``)
jsonschema's own format checker, so that ``format`` means exactly what the
ground-truth validator checks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["GLOBAL_NAMES", "HELPERS", "IMPORTS", "Helper", "ordered"]


@dataclass(frozen=True)
class Helper:
    source: str
    #: other helpers this one calls
    needs: tuple[str, ...] = ()
    #: names it imports: "module:name"
    imports: tuple[str, ...] = ()


_WHOLE = '''
def whole_number(value: Any) -> Any:
    """JSON Schema counts 1.0 as an integer."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


Integer = Annotated[StrictInt, BeforeValidator(whole_number)]
'''

_NUMBER = '''
# a JSON number: an integer or a float, never a boolean
Number = StrictInt | StrictFloat
'''

_NOTHING = '''
def no_value(value: Any) -> Any:
    raise ValueError("no value is allowed here")


Nothing = Annotated[Any, AfterValidator(no_value)]
'''

_JSON_EQUAL = '''
def json_equal(a: Any, b: Any) -> bool:
    """Equality in the JSON data model: 1 == 1.0, but true != 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, list) or isinstance(b, list):
        return (isinstance(a, list) and isinstance(b, list) and len(a) == len(b)
                and all(json_equal(x, y) for x, y in zip(a, b)))
    if isinstance(a, dict) or isinstance(b, dict):
        return (isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys()
                and all(json_equal(a[k], b[k]) for k in a))
    return bool(a == b)
'''

_STRICT_LITERAL = '''
def json_literal(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """Literal compares with ==, where True == 1; JSON keeps booleans apart."""
    result = handler(value)
    if isinstance(result, bool) != isinstance(value, bool):
        raise ValueError(f"{value!r} is not one of the allowed values")
    return result


JsonLiteral = WrapValidator(json_literal)
'''

_ONE_OF = '''
def one_of(*allowed: Any) -> AfterValidator:
    """The value must equal (in JSON terms) one of ``allowed``."""
    def check(value: Any) -> Any:
        if not any(json_equal(value, option) for option in allowed):
            raise ValueError(f"must be one of {list(allowed)!r}")
        return value
    return AfterValidator(check)
'''

_ADAPTER = '''
def adapter(item_type: Any) -> TypeAdapter[Any]:
    if isinstance(item_type, type) and issubclass(item_type, BaseModel):
        return TypeAdapter(item_type)
    return TypeAdapter(item_type, config=ConfigDict(regex_engine="python-re"))


def matches(check: TypeAdapter[Any], value: Any) -> bool:
    try:
        check.validate_python(value)
    except ValidationError:
        return False
    return True


def validate_as(check: TypeAdapter[Any], value: Any, where: str) -> None:
    try:
        check.validate_python(value)
    except ValidationError as exc:
        raise ValueError(f"{where}: {exc.errors()[0]['msg']}") from None
'''

_UNIQUE = '''
def unique_items(value: Any) -> Any:
    """No two items may be equal (in JSON terms)."""
    if isinstance(value, list):
        for i, item in enumerate(value):
            if any(json_equal(item, earlier) for earlier in value[:i]):
                raise ValueError(f"items must be unique; {item!r} repeats")
    return value
'''

_CONTAINS = '''
def contains(item_type: Any, min_count: int = 1, max_count: int | None = None) -> BeforeValidator:
    """Between min_count and max_count items must be valid as item_type."""
    check = adapter(item_type)

    def count_matches(value: Any) -> Any:
        if isinstance(value, list):
            count = sum(matches(check, item) for item in value)
            if count < min_count:
                raise ValueError(f"needs at least {min_count} matching items, has {count}")
            if max_count is not None and count > max_count:
                raise ValueError(f"allows at most {max_count} matching items, has {count}")
        return value
    return BeforeValidator(count_matches)
'''

_PREFIX = '''
def prefix_items(*item_types: Any, rest: Any = Any) -> BeforeValidator:
    """Item i must be valid as item_types[i]; items after them as rest."""
    checks = [adapter(t) for t in item_types]
    rest_check = adapter(rest)

    def check_items(value: Any) -> Any:
        if isinstance(value, list):
            for i, item in enumerate(value):
                validate_as(checks[i] if i < len(checks) else rest_check, item, f"item {i}")
        return value
    return BeforeValidator(check_items)
'''

_MULTIPLE = '''
def multiple_of(divisor: float) -> AfterValidator:
    """value / divisor must be a whole number."""
    def check(value: Any) -> Any:
        try:
            quotient = value / divisor
            whole = int(quotient) == quotient
        except OverflowError:
            whole = (Fraction(value) / Fraction(divisor)).denominator == 1
        if not whole:
            raise ValueError(f"must be a multiple of {divisor!r}")
        return value
    return AfterValidator(check)
'''

_FORMAT = '''
def json_format(name: str) -> AfterValidator:
    """The string must be valid for JSON Schema's format ``name``."""
    def check(value: Any) -> Any:
        if not Draft202012Validator.FORMAT_CHECKER.conforms(value, name):
            raise ValueError(f"not a valid {name}")
        return value
    return AfterValidator(check)
'''

_PROPERTY_COUNT = '''
def check_property_count(data: dict[str, Any], min_count: int = 0, max_count: int | None = None) -> None:
    if len(data) < min_count:
        raise ValueError(f"needs at least {min_count} properties")
    if max_count is not None and len(data) > max_count:
        raise ValueError(f"allows at most {max_count} properties")
'''

_DEPENDENT = '''
def check_dependent_required(data: dict[str, Any], rules: dict[str, list[str]]) -> None:
    """When a key of rules is present, the keys it lists must be present too."""
    for key, needed in rules.items():
        missing = [name for name in needed if key in data and name not in data]
        if missing:
            raise ValueError(f"{key!r} requires {missing!r}")
'''

_PATTERNS = '''
def check_pattern_properties(data: dict[str, Any], patterns: dict[str, Any]) -> None:
    """Every property whose name matches a pattern must be valid as its type."""
    for pattern, value_type in patterns.items():
        check = adapter(value_type)
        for key, value in data.items():
            if re.search(pattern, key):
                validate_as(check, value, f"property {key!r}")
'''

_ADDITIONAL = '''
def check_additional_properties(
    data: dict[str, Any], known: tuple[str, ...], patterns: tuple[str, ...], allowed: Any
) -> None:
    """Properties neither listed nor matching a pattern must be valid as
    ``allowed`` (False: must not appear)."""
    check = None if allowed is False else adapter(allowed)
    for key, value in data.items():
        if key in known or any(re.search(p, key) for p in patterns):
            continue
        if check is None:
            raise ValueError(f"property {key!r} is not allowed")
        validate_as(check, value, f"property {key!r}")
'''

HELPERS: dict[str, Helper] = {
    "Integer": Helper(_WHOLE, imports=("pydantic:BeforeValidator", "pydantic:StrictInt")),
    "Number": Helper(_NUMBER, imports=("pydantic:StrictFloat", "pydantic:StrictInt")),
    "Nothing": Helper(_NOTHING, imports=("pydantic:AfterValidator",)),
    "json_equal": Helper(_JSON_EQUAL),
    "JsonLiteral": Helper(
        _STRICT_LITERAL,
        imports=("pydantic:ValidatorFunctionWrapHandler", "pydantic:WrapValidator"),
    ),
    "one_of": Helper(_ONE_OF, ("json_equal",), ("pydantic:AfterValidator",)),
    "adapter": Helper(
        _ADAPTER,
        imports=("pydantic:BaseModel", "pydantic:ConfigDict", "pydantic:TypeAdapter", "pydantic:ValidationError"),
    ),
    "unique_items": Helper(_UNIQUE, ("json_equal",), ("pydantic:BeforeValidator",)),
    "contains": Helper(_CONTAINS, ("adapter",), ("pydantic:BeforeValidator",)),
    "prefix_items": Helper(_PREFIX, ("adapter",), ("pydantic:BeforeValidator",)),
    "multiple_of": Helper(_MULTIPLE, imports=("fractions:Fraction", "pydantic:AfterValidator")),
    "json_format": Helper(
        _FORMAT, imports=("jsonschema:Draft202012Validator", "pydantic:AfterValidator")
    ),
    "check_property_count": Helper(_PROPERTY_COUNT),
    "check_dependent_required": Helper(_DEPENDENT),
    "check_pattern_properties": Helper(_PATTERNS, ("adapter",), ("re:",)),
    "check_additional_properties": Helper(_ADDITIONAL, ("adapter",), ("re:",)),
}


#: what generated modules may import, by module (only the names they use)
IMPORTS = {
    "typing": ("Annotated", "Any", "Literal"),
    "fractions": ("Fraction",),
    "jsonschema": ("Draft202012Validator",),
    "pydantic": (
        "AfterValidator", "BaseModel", "BeforeValidator", "ConfigDict", "Field", "RootModel",
        "StrictBool", "StrictFloat", "StrictInt", "StrictStr", "TypeAdapter", "ValidationError",
        "ValidatorFunctionWrapHandler", "WrapValidator", "model_validator",
    ),
    "pydantic.experimental.missing_sentinel": ("MISSING",),
}

#: every module-level name a generated module may define or import: class and
#: field names must not shadow them (a class body would see its own field)
GLOBAL_NAMES = frozenset(
    {"re", "Schema"}
    | {name for names in IMPORTS.values() for name in names}
    | {m for h in HELPERS.values() for m in re.findall(r"^(?:def )?(\w+)\b", h.source, re.MULTILINE)}
)


def ordered(names: set[str]) -> list[str]:
    """``names`` plus what they need, each after its dependencies, in
    HELPERS order (so output is deterministic)."""
    wanted: set[str] = set()
    stack = list(names)
    while stack:
        name = stack.pop()
        if name not in wanted:
            wanted.add(name)
            stack.extend(HELPERS[name].needs)
    return [name for name in HELPERS if name in wanted]
