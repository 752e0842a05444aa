"""Where the model looked in the schema when it answered (the ConCodeEval
paper's Figure 2), stored compactly per generation: per layer (mean over
heads) the attention mass the answer position puts on the schema's begin /
middle / end (first 30% of the schema's tokens, next 40%, last 30%: the
split Figure 1 uses), the schema's whole share, and a coarse profile over
the schema's tokens. Never the full tensors."""

from __future__ import annotations

from pydantic import Field

from conformbench.records.base import FrozenRecord

__all__ = ["PROFILE_BINS", "AttentionRecord"]

#: bins of the per-position profile (equal slices of the schema's tokens)
PROFILE_BINS = 10


class AttentionRecord(FrozenRecord):
    """Attention of the first generated token (the answer position)."""

    #: [first, end) token indices of the schema text in the prompt
    schema_tokens: tuple[int, int]
    #: tokens the query attended over (the prompt; padding excluded)
    keys: int
    #: per layer: mass on the schema's begin, middle and end
    bme: list[tuple[float, float, float]] = Field(default_factory=list)
    #: per layer: the schema's whole share of the attention (= sum of bme)
    schema_share: list[float] = Field(default_factory=list)
    #: per layer: mass on each of PROFILE_BINS equal slices of the schema
    profile: list[list[float]] = Field(default_factory=list)

    @property
    def layers(self) -> int:
        return len(self.bme)
