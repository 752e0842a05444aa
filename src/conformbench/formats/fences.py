"""Finding the sample inside a model's answer.

Rules (the same for every output format; docs/formats.md repeats them):

* A fence is a line made of at least three backticks, optionally indented by
  up to three spaces, followed by an optional info string. The first word of
  the info string names the language.
* The sample is the content of the first fenced block whose language is
  empty or one of the format's names (``json``; ``yaml``/``yml``; ``xml``),
  compared case-insensitively. Blocks in other languages are skipped whole.
* The block ends at the next line made of at least as many backticks as the
  opening fence. A block that is never closed runs to the end of the text
  (prompts often end with an opening fence that the model continues).
* Prose before and after a fenced block is allowed. When there is no such
  block, the sample is the whole text with surrounding whitespace removed:
  raw answers must be nothing but the document.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Literal

__all__ = ["Sample", "extract_sample"]

_OPEN = re.compile(r"^ {0,3}(`{3,})[ \t]*([^`\s]*)[^`\n]*$")
_CLOSE = re.compile(r"^ {0,3}(`{3,})[ \t]*$")


@dataclass(frozen=True)
class Sample:
    text: str
    source: Literal["fenced", "raw"]


def _block_end(lines: list[str], start: int, ticks: int) -> int:
    """Index of the closing fence line of a block opened before ``start``."""
    for i in range(start, len(lines)):
        m = _CLOSE.match(lines[i].rstrip("\r\n"))
        if m and len(m.group(1)) >= ticks:
            return i
    return len(lines)


def extract_sample(text: str, languages: Collection[str]) -> Sample:
    """The sample of ``text`` for a format whose fence names are ``languages``."""
    wanted = {name.lower() for name in languages} | {""}
    lines = text.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        m = _OPEN.match(lines[i].rstrip("\r\n"))
        if m is None:
            i += 1
            continue
        end = _block_end(lines, i + 1, len(m.group(1)))
        if m.group(2).lower() in wanted:
            return Sample("".join(lines[i + 1 : end]), "fenced")
        i = end + 1
    return Sample(text.strip(), "raw")
