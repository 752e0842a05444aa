"""Reading a ConCodeEval answer: strictly in the cell's output format, an
answer that continues the prompt's open code fence read as the inside of
that block, and whether a cut generation holds a cut sample. An answer over
the size limit is refused before its fences are read, counted as it came (a
replay's cut-stored answer as the whole one: ``records.stored_text``)."""

from __future__ import annotations

import re

from conformbench.formats.base import ParsedOutput, output_formats
from conformbench.formats.limits import oversize
from conformbench.jsontypes import Schema

__all__ = ["continues_open_fence", "parse_answer", "truncated_sample"]


_FENCE_LINE = re.compile(r"^ {0,3}`{3,}", re.MULTILINE)
_FENCE_LINE_FULL = re.compile(r"^ {0,3}`{3,}[^\n]*$", re.MULTILINE)


def truncated_sample(truncated: bool, text: str, continued: bool) -> bool:
    """A generation that hit max_tokens holds a cut sample unless its code
    block was closed before the cut (two fence lines, or one closing the
    prompt's own open fence)."""
    if not truncated:
        return False
    fences = len(_FENCE_LINE.findall(text)) + (1 if continued else 0)
    return fences < 2


#: a first line that is only a fence's info string naming an output format
_INFO_LINE = re.compile(r"(?:json|yaml|yml|xml)[ \t]*\n", re.IGNORECASE)


def continues_open_fence(text: str) -> bool:
    """Every ConCodeEval prompt ends with an opened code fence. An answer
    that does not open its own block, whose first fence line is bare (a
    closer: no language) and that has an odd number of fence lines, is the
    inside of the prompt's block: '{...}' then a closing fence, then prose.
    So is one with no fence line at all that starts with an info-string
    line: a raw (base-model) prompt ends with the fence itself, and the
    model completes that line with the language ('json\n{...').
    """
    if text.lstrip().startswith("`"):
        return False
    fences = _FENCE_LINE_FULL.findall(text)
    if not fences:
        return _INFO_LINE.match(text) is not None
    return fences[0].strip().strip("`") == "" and len(fences) % 2 == 1


def parse_answer(fmt: str, text: str, schema: Schema | None) -> tuple[ParsedOutput, bool]:
    """Parse strictly in output format ``fmt``, reading an answer that
    continues the prompt's open fence (see ``continues_open_fence``) as the
    inside of that block; a first line that is an info string completes the
    fence line. Returns the result and whether it continued the fence."""
    out = output_formats.get(fmt)()
    if too_long := oversize(text):
        return ParsedOutput(ok=False, error=too_long), False
    if continues_open_fence(text):
        opener = "```" if _INFO_LINE.match(text) else "```\n"
        return out.parse(opener + text, schema), True
    return out.parse(text, schema), False
