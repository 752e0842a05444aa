"""An answer as a replay stores it: whole up to the parse limit, else cut.

An answer longer than the parse limit (``formats.limits.Limits.max_chars``)
is invalid whatever it holds (every reader refuses it before reading it), so
a replay keeps only its first and last ``STORED_EDGE_CHARS`` characters with
a marker between them, and the generation record says how long the whole
answer was and its sha256 (``text_chars``, ``text_sha256``). A record then
holds at most about 2 * 4,000 characters of answer whatever the server sent
(6 bytes each as JSON at worst: ~48 KB), so a replay stays readable at any
``-n`` and ``--max-rounds`` (docs/guarantees.md).

Read back, a cut answer is a ``CutText``: the stored characters, carrying
the whole answer's length, which the size check (``answer_chars``) and a
later round's excerpt (``records.rounds.answer_excerpt``) read, so scoring,
resuming and replaying treat it exactly as they treated the whole answer.
"""

from __future__ import annotations

import hashlib

__all__ = ["STORED_EDGE_CHARS", "STORE_LIMIT_CHARS", "CutText", "answer_chars", "cut_for_storage", "stored_answer"]

#: the parse limit (formats.limits.Limits.max_chars, checked there): an
#: answer longer than this is stored cut
STORE_LIMIT_CHARS = 1_000_000
#: characters kept of each end of an answer stored cut
STORED_EDGE_CHARS = 4000


class CutText(str):
    """An answer stored cut: the stored text (its first and last
    ``STORED_EDGE_CHARS`` characters around a marker) with the whole
    answer's length in characters (``chars``) and sha256 (``sha256``).
    Anything made from it (a slice, a concatenation) is a plain str."""

    chars: int
    sha256: str

    def __new__(cls, stored: str, chars: int, sha256: str) -> CutText:
        made = super().__new__(cls, stored)
        made.chars = chars
        made.sha256 = sha256
        return made


def answer_chars(text: str) -> int:
    """The length of the answer ``text`` stands for: a cut one's whole length."""
    return text.chars if isinstance(text, CutText) else len(text)


def _marker(chars: int, sha256: str) -> str:
    cut = chars - 2 * STORED_EDGE_CHARS
    return f"\n[... {cut} characters cut from an answer of {chars} characters, sha256 {sha256} ...]\n"


def cut_for_storage(text: str) -> tuple[str, int | None, str | None]:
    """What a record stores of answer ``text``: the text, and for a cut one
    the whole answer's length and sha256 (None, None: stored whole). A
    ``CutText`` (an answer read back from a replay) stays as it was stored."""
    if isinstance(text, CutText):
        return str(text), text.chars, text.sha256
    if len(text) <= STORE_LIMIT_CHARS:
        return text, None, None
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    stored = text[:STORED_EDGE_CHARS] + _marker(len(text), digest) + text[-STORED_EDGE_CHARS:]
    return stored, len(text), digest


def stored_answer(text: str, chars: int | None, sha256: str | None) -> str:
    """The answer a record stands for: ``text``, or a ``CutText`` when the
    record says it was stored cut."""
    if chars is None or sha256 is None:
        return text
    return CutText(text, chars, sha256)
