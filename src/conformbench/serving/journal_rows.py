"""The rows of ``engines cost``'s journal as typed records with bounds: a
journal is read back row by row through these, so a damaged one (a string,
``Infinity`` or a list where a number belongs, an index outside the
prompts, a level or arm the settings do not name) is refused in one line
naming the line, never scored."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, ValidationError

from conformbench.records.base import FrozenRecord

__all__ = ["ANSWER_FINISHES", "MAX_LEVEL", "MAX_N", "MAX_REPEATS", "BatchRow", "RequestRow", "check_row"]

#: the bounds of ``engines cost``'s counts (its options refuse more)
MAX_N = 100_000
MAX_REPEATS = 1_000
MAX_LEVEL = 1_024
#: the finish reasons of an answer (cut by the cap or the loop stop counts: it is judged as written);
#: any other (``content_filter``, ``tool_calls``...) is no answer to the prompt, counted as an error
ANSWER_FINISHES = frozenset({"stop", "length", "loop"})
_COUNT = 1 << 31
_SECONDS = 1e7
_TEXT = 1 << 24

Seconds = Annotated[float, Field(ge=0.0, le=_SECONDS)]
Count = Annotated[int, Field(ge=0, lt=_COUNT)]


class _Row(FrozenRecord):
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False, strict=True)

    repeat: Annotated[int, Field(ge=0, lt=MAX_REPEATS)]
    concurrency: Annotated[int, Field(ge=1, le=MAX_LEVEL)]
    arm: Literal["off", "warm", "cold"]


class RequestRow(_Row):
    """One request as it ended (serving/measure.py's ``request_row``)."""

    kind: Literal["request"]
    index: Annotated[int, Field(ge=0, lt=MAX_N)]
    id: Annotated[str, Field(max_length=1000)]
    offset_s: Seconds
    sent_s: Seconds
    first_s: Seconds | None
    last_s: Seconds | None
    total_s: Seconds
    chunks: Count
    usage: dict[Literal["prompt_tokens", "completion_tokens"], Count] | None
    finish_reason: Annotated[str, Field(max_length=40)] | None
    status: Annotated[int, Field(ge=0, le=999)] | None
    error: Annotated[str, Field(max_length=10_000)] | None
    nonce: Annotated[str, Field(max_length=100)] | None
    text: Annotated[str, Field(max_length=_TEXT)]
    notes: Annotated[list[Annotated[str, Field(max_length=1000)]], Field(max_length=3)]


class BatchRow(_Row):
    """A batch whose requests are all in."""

    kind: Literal["batch"]
    wall_s: Seconds
    n: Annotated[int, Field(ge=1, le=MAX_N)]
    rate: Annotated[float, Field(gt=0.0, le=1e6)] | None


def check_row(row: Any, header: dict[str, Any]) -> dict[str, Any]:
    """``row`` as its record reads it, within ``header``'s settings;
    ValueError or TypeError (why) otherwise."""
    if not isinstance(row, dict):
        raise TypeError(f"a JSON {type(row).__name__}, not a row")
    record: RequestRow | BatchRow
    try:
        record = RequestRow.model_validate(row) if row.get("kind") == "request" else BatchRow.model_validate(row)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ValueError(f"{'.'.join(str(p) for p in first['loc']) or 'the row'}: {first['msg']}") from None
    arms = ("off", *header.get("caches", ()))
    if record.repeat >= int(header.get("repeats", 0)) or record.concurrency not in header.get("levels", ()) \
            or record.arm not in arms:
        raise ValueError(f"batch (repeat {record.repeat}, concurrency {record.concurrency}, {record.arm}) is not "
                         "one the settings measure")
    if isinstance(record, RequestRow) and record.index >= int(header.get("n", 0)):
        raise ValueError(f"index {record.index} is outside the {header.get('n')} prompts")
    return record.model_dump()
