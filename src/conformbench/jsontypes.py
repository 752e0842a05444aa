"""Type aliases shared by every package."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeAlias

__all__ = ["JSONValue", "Schema", "is_number_error", "number_error"]

if TYPE_CHECKING:
    from typing_extensions import TypeAliasType

    #: Any value of the JSON data model (what json.loads returns), recursive
    #: for the type checker.
    JSONValue = TypeAliasType(
        "JSONValue", "dict[str, JSONValue] | list[JSONValue] | str | int | float | bool | None"
    )
else:
    # At run time pydantic records hold JSON values exactly as parsed: validating
    # them against the union (lax mode) changed which validation negatives the
    # task draws for 8 of 100 schemas (2026-12-01), so the runtime alias is Any.
    JSONValue = Any
#: A JSON Schema document as parsed from JSON. Key order is meaningful.
Schema: TypeAlias = dict[str, Any]


def is_number_error(exc: BaseException) -> bool:
    """Whether ``exc`` is Python's refusal of an integer past its int-string
    limit (``sys.get_int_max_str_digits()``, 4300 digits): json.loads and
    tomllib raise it as a bare ValueError, which must be one line, exit 2."""
    return isinstance(exc, ValueError) and "integer string conversion" in str(exc)


def number_error(exc: BaseException) -> str:
    """The one-line reason for a number no reader takes."""
    if is_number_error(exc):
        return "an integer has more digits than any reader takes (over 4300)"
    return f"a number no reader takes ({exc})"
