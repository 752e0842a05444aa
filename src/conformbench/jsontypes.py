"""Type aliases shared by every package."""

from __future__ import annotations

from typing import Any, TypeAlias

__all__ = ["JSONValue", "Schema"]

#: Any value of the JSON data model (what json.loads returns).
JSONValue: TypeAlias = Any
#: A JSON Schema document as parsed from JSON. Key order is meaningful.
Schema: TypeAlias = dict[str, Any]
