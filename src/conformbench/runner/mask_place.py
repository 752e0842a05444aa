"""Where a generation's mask first refused the model's own top token, in
the terms of the recorded answer (``records.mask_toll``): the backend
counts characters in the whole output; for think_then_constrain the answer
is what follows the stop string, so the offset is moved into it (or left
in the thinking), and for JSON answers the place is named by the JSON
pointer of the member it fell in."""

from __future__ import annotations

from conformbench.formats.json.answer_path import json_pointer_at
from conformbench.records.generation import GenerationRequest, GenerationResult
from conformbench.records.mask_toll import MaskToll

__all__ = ["THINKING", "placed_toll"]

#: the place of a refusal inside think_then_constrain's free text
THINKING = "(thinking)"


def placed_toll(request: GenerationRequest, outcome: GenerationResult) -> MaskToll | None:
    """``outcome.mask_toll`` with its first refusal placed in the answer
    (and its answer part's, think_then_constrain's, too)."""
    toll = outcome.mask_toll
    if toll is None:
        return None
    placed = _placed(request, outcome, toll, answer=False)
    if toll.answer is not None:
        placed = placed.model_copy(update={"answer": _placed(request, outcome, toll.answer, answer=True)})
    return placed


def _placed(request: GenerationRequest, outcome: GenerationResult, toll: MaskToll, answer: bool) -> MaskToll:
    if toll.first_refused_char is None:
        return toll
    char = toll.first_refused_char
    constraint = request.constraint
    thinking = constraint.thinking if constraint is not None else None
    if thinking is not None and outcome.thinking is not None:
        boundary = len(outcome.thinking) + len(thinking.stop)
        if char < boundary and not answer:
            return toll.model_copy(update={"first_refused_char": min(char, len(outcome.thinking)),
                                           "first_refused_at": THINKING})
        # the answer part's first step may be a token that straddles the stop string: offset 0
        char = max(0, char - boundary)
    json = constraint is not None and constraint.output_format == "json"
    at = json_pointer_at(outcome.text, char) if json else None
    return toll.model_copy(update={"first_refused_char": char, "first_refused_at": at})
