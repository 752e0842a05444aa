"""Text from records shown literally in Markdown: every report that writes
Markdown (report.md, engines.md, engines-check.md) passes each field of
user or server data through ``md_text``, the one escaping function."""

from __future__ import annotations

import re

__all__ = ["md_text", "plain_text"]

#: C0 controls but tab and the line breaks, DEL, C1 controls (CSI, OSC...),
#: and the bidirectional overrides and isolates: text from a file that would
#: move the cursor, retitle the terminal or reorder what is shown
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def plain_text(text: str) -> str:
    """``text`` with every control character shown as its escape
    (``\\x1b``, ``\\u202e``): an ESC, CSI or OSC sequence, a C1 control or a
    bidi override from a replay reaches no terminal or report raw."""
    return _CONTROLS.sub(lambda m: ascii(m.group())[1:-1], text)


def md_text(text: str) -> str:
    """``text`` (a label, an item id: user data) as literal Markdown text:
    raw HTML is shown, not rendered (no tag opens without ``<``; ``->`` in
    condition keys stays as written), and a ``|`` stays inside its table cell."""
    text = plain_text(text)
    for raw, escaped in (("<", "&lt;"), ("|", "\\|")):
        text = text.replace(raw, escaped)
    # every line break str.splitlines knows (U+2028 included) would end a
    # table row or list item: the field stays on its one line
    return " ".join(text.splitlines())
