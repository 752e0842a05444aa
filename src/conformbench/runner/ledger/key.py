"""What makes two runs' generations the same: the ``GenerationKey``, the
one projection through which a resume, a growth, a fold and a part compare
specs.

A spec's fields are generation-defining unless their type carries the
``Operational`` mark (``records.base``): ``threads``, ``concurrency``,
``timeout_s``, ``max_retries``, the scoring params of a task, the dataset's
digest (checked apart, on content: ``ledger.content``). A model's ``extra``
table holds the options its backend declares; those declared
``operational`` in the backend's manifest are left out as well. Two runs
with equal keys make the same generations, so one resumes the other."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel

from conformbench.backends.backend_options import operational_keys
from conformbench.records.base import Operational
from conformbench.records.spec import AXIS_KEYS, ModelSpec, ReplaySpec, TaskSpec

__all__ = ["GRID_KEYS", "GenerationKey", "spec_differences"]

#: the task keys whose lists make the task's conditions (``ledger.grow_grid``)
GRID_KEYS = ("arms", "engines", *AXIS_KEYS)
#: the task keys a growth may raise (``ledger.growth``)
_GROWN_TASK_KEYS = ("n", "max_tokens", "free_tokens", "json_tokens", "packaging_tokens", "think_tokens")
_MAX_LISTED = 3

_R = TypeVar("_R", bound=BaseModel)


def _generating(record: _R) -> _R:
    """``record`` with each field marked ``Operational`` at its default (or,
    for a mark naming keys, without those keys of its table)."""
    update: dict[str, Any] = {}
    for name, info in type(record).model_fields.items():
        mark = next((m for m in info.metadata if isinstance(m, Operational)), None)
        if mark is None:
            continue
        value = getattr(record, name)
        update[name] = ({k: v for k, v in value.items() if k not in mark.keys} if mark.keys
                        else info.get_default(call_default_factory=True))
    return record.model_copy(update=update)


def _model(model: ModelSpec) -> ModelSpec:
    kept = _generating(model)
    dropped = operational_keys(model.backend)
    return kept.model_copy(update={"extra": {k: v for k, v in model.extra.items() if k not in dropped}})


def _defaults(record: _R, names: tuple[str, ...]) -> _R:
    fields = type(record).model_fields
    return record.model_copy(update={n: fields[n].get_default(call_default_factory=True) for n in names})


@dataclass(frozen=True)
class GenerationKey:
    """The part of a replay spec that defines its generations (a
    ``ReplaySpec`` with its operational fields at their defaults), compared
    by its canonical JSON."""

    spec: ReplaySpec = field(compare=False)
    canonical: str = field(repr=False)

    @classmethod
    def of(cls, spec: ReplaySpec) -> GenerationKey:
        return cls._keyed(spec.model_copy(update={"models": [_model(m) for m in spec.models],
                                                  "tasks": [_generating(t) for t in spec.tasks]}))

    @classmethod
    def _keyed(cls, spec: ReplaySpec) -> GenerationKey:
        return cls(spec, json.dumps(spec.model_dump(mode="json"), sort_keys=True, ensure_ascii=False))

    def _with(self, tasks: list[TaskSpec] | None = None, **update: Any) -> GenerationKey:
        return self._keyed(self.spec.model_copy(update={"tasks": tasks or self.spec.tasks, **update}))

    def without_growth(self) -> GenerationKey:
        """Without what a growth may raise: each task's n and budgets, the
        run's max_tokens and samples."""
        decoding = _defaults(self.spec.decoding, ("max_tokens", "samples"))
        return self._with([_defaults(t, _GROWN_TASK_KEYS) for t in self.spec.tasks], decoding=decoding)

    def without_grid(self, recorded: ReplaySpec) -> GenerationKey:
        """Without what a grid growth may change: each task's grid lists, the
        recipes of arms the ``recorded`` run did not name, and the round
        limit where it had no multi-round arm (a header records none then)."""
        arms = {name: recipe for name, recipe in self.spec.arms.items() if name in recorded.arms}
        decoding = self.spec.decoding
        if recorded.decoding.max_rounds is None:
            decoding = _defaults(decoding, ("max_rounds",))
        return self._with([_defaults(t, GRID_KEYS) for t in self.spec.tasks], arms=arms, decoding=decoding)

    def scoring_only(self, other: GenerationKey) -> bool:
        """Whether the two differ only in ``format_assertion``, which changes
        how recorded generations are scored, not the generations."""
        return self != other and self._with(format_assertion=False) == other._with(format_assertion=False)

    def differences(self, now: GenerationKey) -> str:
        """`` (KEY: A in the replay, B now; ...)`` naming the first few keys
        where this (the recorded key) and ``now`` differ, or ''."""
        found = spec_differences(self.spec.model_dump(mode="json"), now.spec.model_dump(mode="json"))
        if not found:
            return ""
        more = f" (and {len(found) - _MAX_LISTED} more)" if len(found) > _MAX_LISTED else ""
        return " (" + "; ".join(found[:_MAX_LISTED]) + more + ")"


_MISSING = object()


def _show(value: Any) -> str:
    return "unset" if value is _MISSING else json.dumps(value, ensure_ascii=False)[:80]


def spec_differences(old: Any, new: Any, where: str = "") -> list[str]:
    """Each key where two plain header specs differ, with both values:
    ``tasks[0].n: 3 in the replay, 5 now``."""
    if isinstance(old, dict) and isinstance(new, dict):
        found: list[str] = []
        for key in [*old, *(k for k in new if k not in old)]:
            path = f"{where}.{key}" if where else str(key)
            found += spec_differences(old.get(key, _MISSING), new.get(key, _MISSING), path)
        return found
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new) \
            and all(isinstance(x, dict) for x in [*old, *new]):
        return [d for i, (a, b) in enumerate(zip(old, new, strict=True))
                for d in spec_differences(a, b, f"{where}[{i}]")]
    if old == new:
        return []
    return [f"{where or 'spec'}: {_show(old)} in the replay, {_show(new)} now"]
