"""What engines cost reads from each request: output tokens (the server's
usage, else the events that carried text), TTFT, TPOT and validity."""

from __future__ import annotations

from typing import Any

import pytest

from conformbench.serving.report import request_measures

SCHEMA: dict[str, Any] = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"],
                          "additionalProperties": False}


def _row(**over: Any) -> dict[str, Any]:
    return {"error": None, "usage": None, "chunks": 5, "first_s": 0.5, "last_s": 1.5, "text": '{"n": 3}', **over}


def test_tpot_spreads_first_to_last_over_the_tokens_after_the_first() -> None:
    m = request_measures(_row(usage={"completion_tokens": 11}, text='{"n": 1234567890}'), SCHEMA)
    assert (m["tokens"], m["from"], m["ttft"]) == (11, "usage", 0.5)
    assert m["tpot"] == pytest.approx(0.1)  # 1.0 s over 10 tokens
    counted = request_measures(_row(), SCHEMA)
    assert (counted["tokens"], counted["from"], counted["tpot"]) == (5, "chunks", pytest.approx(0.25))


def test_one_token_has_no_tpot_and_a_failed_request_no_measure() -> None:
    assert request_measures(_row(chunks=1, last_s=0.5), SCHEMA)["tpot"] is None
    assert set(request_measures(_row(error="Timeout"), SCHEMA).values()) == {None}


@pytest.mark.parametrize(("text", "valid"), [
    ('{"n": 3}', True),
    ('```json\n{"n": 3}\n```', True),  # as the scorer reads a fenced block
    ('{"n": 3.5}', False),
    ('{"n": 3, "m": 1}', False),
    ("n is 3", False),
])
def test_validity_is_the_scorers_against_the_full_schema(text: str, valid: bool) -> None:
    assert request_measures(_row(text=text), SCHEMA)["valid"] is valid


@pytest.mark.parametrize(("claimed", "cap", "believed"), [
    (6, 96, True), (9, 96, True),  # 8 bytes of text, and the end token
    (10, 96, False), (2**31 - 1, None, False), (97, 96, False), (-1, 96, False), (True, 96, False),
])
def test_a_server_count_is_believed_within_the_cap_the_bytes_and_the_events(
        claimed: object, cap: int | None, believed: bool) -> None:
    m = request_measures(_row(usage={"completion_tokens": claimed}, chunks=6), SCHEMA, cap)
    assert (m["tokens"], m["from"]) == ((claimed, "usage") if believed else (6, "distrusted"))
