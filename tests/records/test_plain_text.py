"""Control characters from files never reach a terminal or report raw
(issue #49, defect 13): ESC/CSI/OSC sequences, C1 controls and bidi
overrides are shown as their escapes by plain_text and md_text."""

from __future__ import annotations

import pytest

from conformbench.records.markdown_escape import md_text, plain_text

HOSTILE = ["\x1b[2J\x1b[31mred", "\x1b]0;retitled\x07", "\x9b31m", "\x85next", "a\u202eevil", "\u2066x\u2069",
           "\x00nul", "\x7fdel"]


@pytest.mark.parametrize("text", HOSTILE)
def test_no_control_character_survives(text: str) -> None:
    for shown in (plain_text(text), md_text(text)):
        assert all(ch == "\t" or (ch.isprintable() and ch not in "\u202e\u2066\u2069") for ch in shown), shown


def test_plain_text_keeps_ordinary_text() -> None:
    assert plain_text("prompt_only[answer] -> json\tok é") == "prompt_only[answer] -> json\tok é"
