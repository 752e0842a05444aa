"""Where a character of a JSON answer falls (formats/json/answer_path.py)."""

from __future__ import annotations

import pytest

from conformbench.formats.json.answer_path import AFTER, json_pointer_at

TEXT = '{"name": "Bo", "steps": [1, 22, {"a/b": 3}], "answer": 4}'


@pytest.mark.parametrize(("piece", "offset", "pointer"), [
    ('{"name"', 0, ""),            # the opening brace: the root
    ('"name"', 0, "/name"),        # a key's quote: its member
    ('": "Bo', 1, "/name"),        # the colon
    ('"Bo"', 1, "/name"),          # inside the value
    (', "steps"', 0, ""),          # the comma between members: the container
    ("1, 22", 0, "/steps/0"),
    ("22,", 1, "/steps/1"),
    (", {", 0, "/steps"),
    ("a/b", 0, "/steps/2/a~1b"),   # RFC 6901 escapes
    ("answer", 2, "/answer"),
    ("4}", 1, ""),                 # the closing brace: its container
])
def test_the_member_a_character_falls_in(piece: str, offset: int, pointer: str) -> None:
    assert json_pointer_at(TEXT, TEXT.index(piece) + offset) == pointer


def test_past_the_end_and_unfinished_answers() -> None:
    assert json_pointer_at(TEXT, len(TEXT)) == AFTER
    assert json_pointer_at('{"a": [1, 2', 11) == "/a/1"  # cut at the budget: still inside
    assert json_pointer_at('{"a": "x\\"}', 11) == "/a"   # an escaped quote does not close the string
    assert json_pointer_at("", 0) == ""
    assert json_pointer_at("42", 5) == AFTER
