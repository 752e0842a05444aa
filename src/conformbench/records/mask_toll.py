"""What a token mask took from the model, per generation (issue #53): at
each masked step the share of the model's probability the grammar allowed
(the softmax of the raw logits, at temperature 1 and before any sampler or
penalty, summed over the allowed tokens) and whether the model's own top
token was among them. Stored as a summary per generation; the per-step
values only with ``--mask-trace``."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from conformbench.records.base import OMITTED_AT_DEFAULT, FrozenRecord, SparseRecord

__all__ = ["MaskToll", "MaskTrace", "compact"]


def compact(value: float) -> float:
    """``value`` to 6 significant digits (a replay stores shares, not bits)."""
    return float(f"{value:.6g}")


class MaskTrace(FrozenRecord):
    """Per masked step, in order (``--mask-trace``)."""

    #: the allowed share of the model's probability
    shares: list[float] = Field(default_factory=list)
    #: whether the model's own top token was allowed
    top_allowed: list[bool] = Field(default_factory=list)
    #: the index in the output of the token the step chose (steps and tokens
    #: part where grammar fast-forward appends forced tokens without a step)
    tokens: list[int] = Field(default_factory=list)


class MaskToll(SparseRecord):
    """The toll of one constrained generation's mask."""

    #: masked steps (sampling steps under the mask, the end token's included)
    steps: int = Field(ge=0)
    #: mean and minimum over the steps of the allowed share (1.0: the grammar
    #: never removed probability)
    mean_share: float = Field(ge=0.0, le=1.0)
    min_share: float = Field(ge=0.0, le=1.0)
    #: steps where the model's own top token was refused
    refused_top: int = Field(ge=0)
    #: the first such step, and where it fell: the character offset in the
    #: recorded answer text (for think_then_constrain, in its ``thinking``
    #: when it fell there) and the place (a JSON pointer such as ``/answer``
    #: or ``/steps/2``, ``""`` for the root, ``(thinking)``, ``(after the
    #: answer)``), None where unknown (output formats other than JSON)
    first_refused_step: int | None = Field(default=None, ge=0)
    first_refused_char: int | None = Field(default=None, ge=0)
    first_refused_at: str | None = Field(default=None, max_length=500)
    #: per-step values (``--mask-trace``; left out otherwise)
    trace: Annotated[MaskTrace | None, OMITTED_AT_DEFAULT] = None
    #: think_then_constrain: the same figures over the answer's steps alone
    #: (those after the stop string, whose free text before it has a share
    #: near 1 and would dilute the mean); its first refused step is counted
    #: from the answer's first step, its character and place are in the
    #: answer. None for other arms, for a call that never reached the stop
    #: string, and in replays made before it was recorded. No trace of its
    #: own: the whole call's trace holds its steps.
    answer: Annotated[MaskToll | None, OMITTED_AT_DEFAULT] = None
