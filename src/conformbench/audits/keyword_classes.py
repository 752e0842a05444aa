"""One classification of JSON Schema keywords per engine, shared by the
keyword probe (generating with a model) and the engine check (walking known
documents through the grammar without a model), so both fill the same
matrix: enforced, ignored, refused."""

from __future__ import annotations

from typing import Literal

__all__ = ["STATUS_MEANINGS", "KeywordStatus", "keyword_status"]

#: "not enforced" is given to an HTTP server only (audits/probe/server.py)
KeywordStatus = Literal["enforced", "ignored", "not enforced", "refused", "inconclusive", "unavailable"]

#: one line per status, for report legends
STATUS_MEANINGS: dict[KeywordStatus, str] = {
    "enforced": "no violation of the keyword got through (evidence from the documents tried, not proof)",
    "ignored": "a violation of the keyword got through: the engine compiled the schema and let it pass",
    "refused": "the engine would not compile any schema using the keyword",
    "inconclusive": "nothing could be judged (no violation was tried, or none could be read)",
    "unavailable": "the engine is not installed",
}


def keyword_status(*, compiled: int, refused: int, violations_tried: int, let_through: int) -> KeywordStatus:
    """The status of one keyword for one engine.

    ``compiled`` and ``refused`` count the schemas using the keyword that the
    engine compiled or refused; ``violations_tried`` counts the judged
    attempts to violate it under a compiled schema (nudged generations, or
    documents known to be invalid) and ``let_through`` those the engine let
    pass. A keyword the engine compiles in some schemas and refuses in others
    is classified on the compiled ones (the refusals are reported beside it).
    """
    if compiled == 0:
        return "refused" if refused else "inconclusive"
    if let_through:
        return "ignored"
    if violations_tried == 0:
        return "inconclusive"
    return "enforced"
