"""Text from records shown literally in Markdown: every report that writes
Markdown (report.md, engines.md, engines-check.md) passes each field of
user or server data through ``md_text``, the one escaping function."""

from __future__ import annotations

__all__ = ["md_text"]


def md_text(text: str) -> str:
    """``text`` (a label, an item id: user data) as literal Markdown text:
    raw HTML is shown, not rendered (no tag opens without ``<``; ``->`` in
    condition keys stays as written), and a ``|`` stays inside its table cell."""
    for raw, escaped in (("<", "&lt;"), ("|", "\\|")):
        text = text.replace(raw, escaped)
    # every line break str.splitlines knows (U+2028 included) would end a
    # table row or list item: the field stays on its one line
    return " ".join(text.splitlines())
