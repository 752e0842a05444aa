"""Type aliases shared by every package."""

from __future__ import annotations

from typing import Any, TypeAlias

from typing_extensions import TypeAliasType

__all__ = ["JSONValue", "Schema"]

#: Any value of the JSON data model (what json.loads returns). Declared with
#: TypeAliasType so that both mypy and pydantic understand the recursion.
JSONValue = TypeAliasType(
    "JSONValue", "dict[str, JSONValue] | list[JSONValue] | str | int | float | bool | None"
)
#: A JSON Schema document as parsed from JSON. Key order is meaningful.
Schema: TypeAlias = dict[str, Any]
