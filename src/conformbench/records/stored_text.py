"""An answer as a replay stores it: whole up to the parse limit, else cut.

An answer longer than the parse limit (``formats.limits.Limits.max_chars``)
is invalid whatever it holds (every reader refuses it before reading it), so
a replay keeps only its first and last ``STORED_EDGE_CHARS`` characters with
a marker between them, and the generation record says how long the whole
answer was and its sha256 (``text_chars``, ``text_sha256``). A record then
holds at most about 2 * 4,000 characters of answer whatever the server sent
(6 bytes each as JSON at worst: ~48 KB), so a replay stays readable at any
``-n`` and ``--max-rounds`` (docs/guarantees.md). A think_then_constrain thinking
over the limit is stored so too (``thinking_chars``, ``thinking_sha256``),
and a reason_then_constrain free text and a prompt's message over it are
stored cut (the marker says the whole length and sha256).

Read back, a cut answer is a ``CutText``: the stored characters, carrying
the whole answer's length, which the size check (``answer_chars``) and a
later round's excerpt (``records.rounds.answer_excerpt``) read, so scoring,
resuming and replaying treat it exactly as they treated the whole answer.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace

from conformbench.records.prompt import Message, Prompt

__all__ = ["STORED_EDGE_CHARS", "STORE_LIMIT_CHARS", "CutText", "answer_chars", "cut_for_storage", "stored_answer",
           "stored_prompt"]

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

    def __reduce__(self) -> tuple[type[CutText], tuple[str, int, str]]:
        """Copied (``dataclasses.asdict`` deep-copies) and pickled as itself."""
        return (CutText, (str(self), self.chars, self.sha256))


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


def stored_prompt(prompt: Prompt) -> Prompt:
    """``prompt`` as a record stores it: a message over the parse limit (a
    packaging turn quoting a free text of that length) cut as an answer is.
    The replay backend matches a request by this form (``replay_key``)."""
    if all(len(m.content) <= STORE_LIMIT_CHARS for m in prompt.messages):
        return prompt
    messages = tuple(Message(m.role, cut_for_storage(m.content)[0]) for m in prompt.messages)
    return replace(prompt, messages=messages)
