"""Type aliases shared by every package."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeAlias

__all__ = ["JSONValue", "Schema"]

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
