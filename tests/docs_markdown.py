"""Reading markdown for tests/test_docs_names.py: a doc's fenced blocks and
inline code spans with their line numbers, and its prose with them blanked
out (docs_refs.py and docs_commands.py read what the docs say about the code
from these)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "conformbench"

#: a placeholder in a path or a command (``DIR``, ``BACKEND``, ``REPLAY``)
PLACEHOLDER = re.compile(r"[A-Z][A-Z_]*")


@dataclass(frozen=True)
class Ref:
    """One reference to the code: ``kind`` is name, path, package path,
    file name, name in file, link, command or flag."""

    doc: str
    line: int
    kind: str
    text: str

    def __str__(self) -> str:
        return f"{self.doc}:{self.line}: {self.kind} {self.text!r}"


@dataclass(frozen=True)
class Code:
    """A piece of code in a doc: a fenced block (``lang`` its info string,
    "" for a bare fence) or an inline span (``lang`` None); ``line`` is the
    doc's line of its first character."""

    line: int
    lang: str | None
    text: str

    def line_at(self, offset: int) -> int:
        """The doc's line of ``text[offset]``."""
        return self.line + self.text.count("\n", 0, offset)


_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)")
_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)


def split_markdown(text: str) -> tuple[list[Code], str]:
    """The fenced blocks and inline spans of ``text``, and its prose: the
    text with every block and span blanked out (lines kept in place). A
    span does not cross a blank line (a paragraph's end)."""
    blocks: list[Code] = []
    prose: list[str] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        opened = _FENCE.match(lines[i])
        if opened is None:
            prose.append(lines[i])
            i += 1
            continue
        fence, end = opened.group(2), i + 1
        while end < len(lines) and not lines[end].strip().startswith(fence):
            end += 1
        blocks.append(Code(i + 2, opened.group(3).lower(), "\n".join(lines[i + 1 : end])))
        prose.extend([""] * (min(end, len(lines) - 1) + 1 - i))
        i = end + 1
    rest = "\n".join(prose)
    spans = [m for m in _SPAN.finditer(rest) if "\n\n" not in m.group(2)]
    codes = blocks + [Code(rest.count("\n", 0, m.start()) + 1, None, m.group(2)) for m in spans]
    blank = list(rest)
    for m in spans:
        blank[m.start() : m.end()] = re.sub(r"[^\n]", " ", m.group(0))
    return codes, "".join(blank)


def docs() -> list[Path]:
    """The markdown the checks read: README.md, BENCHMARKS.md, docs/**."""
    return [ROOT / "README.md", ROOT / "BENCHMARKS.md", *sorted((ROOT / "docs").rglob("*.md"))]
