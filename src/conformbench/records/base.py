"""The base of every pydantic record: immutable, and unknown keys rejected
(a misspelt key in a spec, replay or report is an error, never ignored)."""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

__all__ = ["FiniteRecord", "FrozenRecord"]


class FrozenRecord(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class FiniteRecord(FrozenRecord):
    """A record of user settings: every float is finite. ``inf`` and ``nan``
    (``--timeout inf``, ``timeout_s = inf`` in TOML) would be written to the
    replay header as ``null``, which no command could read back."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    @model_validator(mode="after")
    def _finite_everywhere(self) -> FiniteRecord:
        """Free-form tables (``params``, ``extra``) hold no non-finite float either."""
        for name, value in self:
            where = _non_finite(value, name)
            if where is not None:
                raise ValueError(f"{where}: not a finite number")
        return self


def _non_finite(value: Any, where: str) -> str | None:
    """The path of the first non-finite float in ``value``, else None."""
    if isinstance(value, float):
        return None if math.isfinite(value) else where
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, (list, tuple)) else ()
    for key, item in items:
        found = _non_finite(item, f"{where}.{key}")
        if found is not None:
            return found
    return None
