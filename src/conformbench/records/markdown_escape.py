"""Text from records shown literally in Markdown: every report that writes
Markdown (report.md, engines.md, engines-check.md, the cost report.md)
passes each field of user or server data through ``md_text``, the one
escaping function (or ``md_code`` for a field shown as code).

``md_text`` leaves nothing live, as CommonMark and GitHub's Markdown read
it, while a label such as ``json->json/0shot/prompt_only[schema]`` stays as
written in the file:

* no raw HTML and no ``<...>`` autolink: ``<`` is ``&lt;``;
* no link, image, link reference or definition: a ``]`` followed by ``(``,
  ``[`` or ``:`` is backslash-escaped (an inline link or image, a full or
  collapsed reference, a definition), and so is a ``[`` or ``(`` that
  starts the field (a field after another ending in ``]``, a definition at
  a line's start);
* no bare URL or address GitHub links by itself: the ``:`` of ``://``, the
  ``.`` of ``www.`` and an ``@`` before a dotted domain are escaped;
* no code span opened by a field (a backtick is escaped), no backslash that
  would undo an escape (one before a character escaped here, or at the
  end, is escaped);
* no ``|`` out of its table cell, no line break, no control character
  (``plain_text``).
"""

from __future__ import annotations

import re

__all__ = ["md_code", "md_text", "plain_text"]

#: C0 controls but tab and the line breaks, DEL, C1 controls (CSI, OSC...),
#: and the bidirectional overrides and isolates: text from a file that would
#: move the cursor, retitle the terminal or reorder what is shown
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def plain_text(text: str) -> str:
    """``text`` with every control character shown as its escape
    (``\\x1b``, ``\\u202e``): an ESC, CSI or OSC sequence, a C1 control or a
    bidi override from a replay reaches no terminal or report raw."""
    return _CONTROLS.sub(lambda m: ascii(m.group())[1:-1], text)


#: what md_text escapes, in one pass (see the module's text)
_INERT = re.compile(
    r"\\(?=[\\\[\]()`|:.@<])|\\$"  # a backslash that would undo an escape (``\\"`` stays)
    r"|\](?=[(\[:])|^[\[(]"  # a bracket that would close a link, image or reference, or open one
    r"|`|\|"  # a code span; a table cell's end
    r"|:(?=//)|(?<=www)\.(?=\w)|@(?=[\w-]+\.\w)",  # GitHub's bare autolinks
    re.IGNORECASE)


def _one_line(text: str) -> str:
    # every line break str.splitlines knows (U+2028 included) would end a
    # table row or list item: the field stays on its one line
    return " ".join(plain_text(text).splitlines())


def md_text(text: str) -> str:
    """``text`` (a label, an item id, a server's model id: untrusted data)
    as literal Markdown text on one line: raw HTML, links, images and
    autolinks are inert (see the module's text) and a ``|`` stays inside
    its table cell; ``->`` in condition keys stays as written."""
    text = _INERT.sub(lambda m: "\\" + m.group(), _one_line(text))
    return text.replace("<", "&lt;")


def md_code(text: str) -> str:
    """``text`` as one inline code span (inert: nothing in a code span is a
    link, an image or HTML), fenced with more backticks than any run in it,
    on one line, a ``|`` escaped for a table cell (GitHub and markdown-it
    read ``\\|`` in a cell as a pipe, code spans included)."""
    text = _one_line(text).replace("|", "\\|")
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"
