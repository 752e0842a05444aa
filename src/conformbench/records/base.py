"""The base of every pydantic record: immutable, and unknown keys rejected
(a misspelt key in a spec, replay or report is an error, never ignored)."""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

__all__ = ["INT_BOUND", "FiniteRecord", "FrozenRecord"]

#: the largest magnitude of an integer in a user's settings (a seed, a
#: number in a free table): 2**63, what every consumer (llama.cpp, a
#: server's JSON, ``float``) takes; 10**5000 would raise OverflowError in
#: ``float()`` or pass the int-string limit when the header is written
INT_BOUND = 1 << 63


class FrozenRecord(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class FiniteRecord(FrozenRecord):
    """A record of user settings: every float is finite and every integer
    within ``INT_BOUND``. ``inf`` and ``nan`` (``--timeout inf``,
    ``timeout_s = inf`` in TOML) would be written to the replay header as
    ``null``, which no command could read back."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    @model_validator(mode="after")
    def _finite_everywhere(self) -> FiniteRecord:
        """Free-form tables (``params``, ``extra``) hold no non-finite float either."""
        for name, value in self:
            where = _non_finite(value, name)
            if where is not None:
                raise ValueError(f"{where}: not a finite number within ±2**63")
        return self


def _non_finite(value: Any, where: str) -> str | None:
    """The path of the first non-finite float or out-of-range integer in
    ``value``, else None."""
    if isinstance(value, float):
        return None if math.isfinite(value) else where
    if isinstance(value, int):
        return None if -INT_BOUND <= value <= INT_BOUND else where
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, (list, tuple)) else ()
    for key, item in items:
        found = _non_finite(item, f"{where}.{key}")
        if found is not None:
            return found
    return None
