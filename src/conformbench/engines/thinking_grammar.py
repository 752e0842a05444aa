"""Free text, then the schema, in one call (think_then_constrain): the
grammar and the reading of its output.

llguidance's Lark grammars take a free-text rule that ends at a stop
string, followed by the schema::

    start: think answer
    think[stop="</think>"]: /(.|\\n)*/
    answer: %json { ...schema... }

so a model may write anything up to the stop string and then only an
answer the schema allows. The thinking's own budget (and its loop cut) is
the decoder's business: backends/thinking_budget.py wraps the grammar's matcher.
"""

from __future__ import annotations

import json

from conformbench.jsontypes import Schema
from conformbench.records.generation import GenerationRequest

__all__ = ["answer_start", "split_thinking", "thinking_grammar", "thinking_stop"]


def thinking_grammar(schema: Schema, stop: str, lenient: bool = True) -> str:
    """The Lark grammar of free text up to ``stop``, then JSON valid for
    ``schema`` (compiled leniently, as the llguidance engine compiles a
    schema alone: what it cannot enforce is left to the validator)."""
    inline = dict(schema) if isinstance(schema, dict) else schema
    if lenient and isinstance(inline, dict):
        inline["x-guidance"] = {**inline.get("x-guidance", {}), "lenient": True}
    return (
        "start: think answer\n"
        f"think[stop={json.dumps(stop)}]: /(.|\\n)*/\n"
        f"answer: %json {json.dumps(inline, ensure_ascii=False)}\n"
    )


def split_thinking(text: str, stop: str) -> tuple[str, str | None]:
    """(the thinking, the answer after the first ``stop``); the answer is
    None when the text never reached the stop string."""
    at = text.find(stop)
    if at < 0:
        return text, None
    return text[:at], text[at + len(stop):]


def thinking_stop(request: GenerationRequest) -> str | None:
    """The stop string of the request's thinking constraint (None: none)."""
    thinking = request.constraint.thinking if request.constraint is not None else None
    return thinking.stop if thinking is not None else None


def answer_start(text: str, stop: str | None) -> int | None:
    """Where the answer begins in ``text`` (just after the first ``stop``);
    None without a stop string or when the text never reached it."""
    if stop is None:
        return None
    at = text.find(stop)
    return None if at < 0 else at + len(stop)
