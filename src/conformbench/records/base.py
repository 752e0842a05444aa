"""The base of every pydantic record: immutable, and unknown keys rejected
(a misspelt key in a spec, replay or report is an error, never ignored)."""

from __future__ import annotations

import math
import typing
from dataclasses import dataclass
from typing import Any, ClassVar, Final

from pydantic import (
    BaseModel,
    ConfigDict,
    GetCoreSchemaHandler,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)
from pydantic_core import CoreSchema, PydanticCustomError, core_schema

from conformbench.errors import UsageError

__all__ = ["INT_BOUND", "OMITTED_AT_DEFAULT", "OPERATIONAL", "FiniteRecord", "FrozenRecord", "Operational", "Range",
           "SparseRecord", "check_ranges", "range_of"]

#: the largest magnitude of an integer in a user's settings (a seed, a
#: number in a free table): 2**63, what every consumer (llama.cpp, a
#: server's JSON, ``float``) takes; 10**5000 would raise OverflowError in
#: ``float()`` or pass the int-string limit when the header is written
INT_BOUND = 1 << 63


class FrozenRecord(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class _OmittedAtDefault:
    def __repr__(self) -> str:
        return "OMITTED_AT_DEFAULT"


#: a field's mark, ``Annotated[int, OMITTED_AT_DEFAULT] = 0``: a
#: ``SparseRecord`` leaves the field out of its dump while it holds its
#: default, so files written before the field existed (or without what it
#: records) stay byte for byte what they were
OMITTED_AT_DEFAULT: Final = _OmittedAtDefault()


@dataclass(frozen=True)
class Operational:
    """A spec field's mark, ``Annotated[int, OPERATIONAL]``: the field says
    how a run is carried out (threads, requests in flight, timeouts) or
    scored, not what it generates, so it is no part of the run's
    ``GenerationKey`` (``runner.ledger.key``): a run that differs only there
    resumes the other. ``keys``: only these keys of a table field are."""

    keys: tuple[str, ...] = ()


#: the mark of a field that is operational as a whole
OPERATIONAL: Final = Operational()


class SparseRecord(FrozenRecord):
    """A record whose fields marked ``OMITTED_AT_DEFAULT`` are left out of
    its dump (Python and JSON) while they equal their default: the rule
    declared once, here, and each such field marked once, in its type."""

    #: the marked fields and the default that leaves each out (per class)
    omitted_at_default: ClassVar[dict[str, Any]] = {}

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        cls.omitted_at_default = {name: field.get_default(call_default_factory=True)
                                  for name, field in cls.model_fields.items()
                                  if any(mark is OMITTED_AT_DEFAULT for mark in field.metadata)}

    @model_serializer(mode="wrap")
    def _defaults_left_out(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            for name, default in self.omitted_at_default.items():
                if name in data and getattr(self, name) == default:
                    del data[name]
        return data


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


@dataclass(frozen=True)
class Range:
    """A numeric option's inclusive range, declared once, in its type
    (``Annotated[int, Range(1, 512)]``): a pydantic record checks a field of
    that type itself (error type ``range``), a dataclass with
    ``check_ranges``, and the command line's flags take their bounds from
    it. A value beyond it is a typo or an attack (``--threads 100000`` made
    llama.cpp crash with a segmentation fault), refused in one line that
    gives the whole range, so one retry is enough."""

    low: float
    high: float

    def refusal(self, value: object) -> str | None:
        """'must be between LOW and HIGH, not VALUE', or None within the range (or unset)."""
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or not self.low <= value <= self.high:
            return f"must be between {_number(self.low)} and {_number(self.high)}, not {value!r}"
        return None

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        def check(value: Any) -> Any:
            why = self.refusal(value)
            if why is not None:
                raise PydanticCustomError("range", "{why}", {"why": why})
            return value

        return core_schema.no_info_after_validator_function(check, handler(source))


def _number(bound: float) -> str:
    """A bound as written: 1048576, not 1.04858e+06; 0.001 as it is."""
    return str(int(bound)) if float(bound).is_integer() else f"{bound:g}"


def range_of(hint: Any) -> Range | None:
    """The ``Range`` an ``Annotated`` type declares, if any."""
    if typing.get_origin(hint) is not typing.Annotated:
        return None
    return next((m for m in typing.get_args(hint)[1:] if isinstance(m, Range)), None)


_RANGES: dict[type, dict[str, Range]] = {}


def _ranges(cls: type) -> dict[str, Range]:
    """Each field of ``cls`` whose type declares a ``Range`` (read once per class)."""
    if cls not in _RANGES:
        hints = typing.get_type_hints(cls, include_extras=True)
        _RANGES[cls] = {name: found for name, hint in hints.items() if (found := range_of(hint)) is not None}
    return _RANGES[cls]


def check_ranges(record: object) -> None:
    """UsageError naming the first field of ``record`` (a dataclass) whose
    value is beyond the ``Range`` its type declares."""
    for name, declared in _ranges(type(record)).items():
        why = declared.refusal(getattr(record, name))
        if why is not None:
            raise UsageError(f"{name} {why}")
