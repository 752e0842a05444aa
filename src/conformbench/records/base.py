"""The base of every pydantic record: immutable, and unknown keys rejected
(a misspelt key in a spec, replay or report is an error, never ignored)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["FrozenRecord"]


class FrozenRecord(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
