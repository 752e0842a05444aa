"""The schema prompts the decoding benchmarks share (beams_attention.py,
sequences.py): "write a JSON sample valid for this schema", one per schema."""

from __future__ import annotations

import json
from typing import Any

SCHEMAS: list[dict[str, Any]] = [
    {"type": "object", "properties": {"name": {"type": "string", "maxLength": 12},
                                      "age": {"type": "integer", "minimum": 0}}, "required": ["name"]},
    {"type": "array", "items": {"type": "number", "multipleOf": 0.5}, "maxItems": 4},
    {"type": "object", "properties": {"id": {"type": "string", "pattern": "^[a-z]{3}$"},
                                      "tags": {"type": "array", "uniqueItems": True}}},
    {"type": "object", "properties": {"city": {"enum": ["Oslo", "Rome"]}, "n": {"type": "integer"}}},
]


def schema_requests(schemas: list[dict[str, Any]], max_tokens: int, **settings: Any) -> list[Any]:
    """One request per schema; the schema text is what attention capture attends to."""
    from conformbench.records.generation import DecodingSettings, GenerationRequest
    from conformbench.records.prompt import Message, Prompt

    out = []
    for schema in schemas:
        text = json.dumps(schema, indent=2)
        prompt = Prompt((Message("user", f"Write a JSON sample valid for this schema:\n{text}\nSample:"),))
        out.append(GenerationRequest(prompt, DecodingSettings(max_tokens=max_tokens, **settings), attend=text))
    return out
