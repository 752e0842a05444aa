"""JSONValue is recursive for the type checker and ``Any`` for pydantic at run
time: JSON values keep their exact Python types through records, validation
and serialisation (booleans are not numbers, 1 and 1.0 stay apart), and a
record holds the very value it was given (validating against the union in
lax mode changed which validation negatives a task drew)."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from conformbench.jsontypes import JSONValue

VALUES: list[JSONValue] = [
    True, False, 1, 0, 1.0, -0.0, 2**70, 1e300, "1", None, [], {},
    [True, 1, 1.0, "1", None, {"a": [False, 0, 0.0]}],
    {"b": True, "a": 1, "c": {"z": 1.5, "y": [[[]]]}},
]


class _Holder(BaseModel):
    value: JSONValue


def _typed(value: object) -> object:
    """``value`` with the type of every part spelled out (so True != 1)."""
    if isinstance(value, dict):
        return ("dict", [(k, _typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [_typed(v) for v in value])
    return (type(value).__name__, repr(value))


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_json_values_keep_their_types(value: JSONValue) -> None:
    held = _Holder(value=value)
    assert _typed(held.value) == _typed(value)
    again = _Holder.model_validate_json(held.model_dump_json())
    assert _typed(again.value) == _typed(value)
    assert _typed(held.model_dump(mode="json")["value"]) == _typed(value)


def test_records_hold_the_value_they_were_given() -> None:
    value: JSONValue = {"a": [1, 2.0, True], "b": None}
    assert _Holder(value=value).value is value
