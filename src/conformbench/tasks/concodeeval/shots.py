"""Few-shot example selection for the ConCodeEval tasks.

The paper picked shots "similar to the most frequent errors" of the
zero-shot runs: short schemas and schemas whose root type is an array. Here
the choice is fixed and deterministic: candidates are ranked by the length of
their JSON rendering (shortest first, ties by id; schemas whose valid sample
is an empty array or object last, since it shows nothing) among schemas that
carry at least one violable constraint, and a test item never gets a shot
from its own schema (the next candidate replaces it).

A shot is only used if its sample survives the trip through every requested
output format: dumped, parsed back and validated, it must keep its verdict
(and, for an invalid sample, its violated keyword). Otherwise the prompt
would show a sample whose label is wrong in that format.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from conformbench.errors import UsageError
from conformbench.formats.base import output_formats
from conformbench.jsontypes import JSONValue, Schema
from conformbench.validator.schema_validator import Violation, validator_for

__all__ = [
    "GENERATION_SHOTS",
    "KEYWORD_PREFERENCE",
    "VALIDATION_SHOTS",
    "CaseLike",
    "InvalidLike",
    "Shot",
    "ShotPool",
    "is_array_root",
    "keeps_violations",
    "object_schema",
    "shot_ids",
    "shown_faithfully",
    "typed_schema",
]

#: the paper's few-shot counts
GENERATION_SHOTS = 3
VALIDATION_SHOTS = 2

#: keywords most often missed zero-shot (paper, Table 3), preferred for the
#: "no" example of validation
KEYWORD_PREFERENCE = ("type", "multipleOf", "exclusiveMinimum", "minLength", "contains")


class InvalidLike(Protocol):
    """What is read of a SchemaCase's one-keyword violation."""

    @property
    def keyword(self) -> str: ...
    @property
    def schema_path(self) -> str: ...
    @property
    def instance(self) -> JSONValue: ...


class CaseLike(Protocol):
    """What is read of a ``conformbench.schemas`` SchemaCase."""

    @property
    def id(self) -> str: ...
    @property
    def schema(self) -> Schema | bool: ...
    @property
    def renderings(self) -> Any: ...
    @property
    def valid_instance(self) -> JSONValue: ...
    @property
    def invalid_instances(self) -> Sequence[Any]: ...


@dataclass(frozen=True)
class Shot:
    """One solved example, stored in Item.input["shots"] (JSON)."""

    schema_id: str
    schema: Schema | bool
    #: schema text per schema format the task runs
    renderings: dict[str, str]
    instance: JSONValue
    #: validation shots: "yes" | "no"; generation shots: None
    answer: str | None = None
    #: the violated keyword of a "no" shot
    keyword: str | None = None
    #: why this example was picked (recorded for the report)
    reason: str = ""

    def to_json(self) -> dict[str, JSONValue]:
        return {
            "schema_id": self.schema_id,
            "schema": self.schema,
            "renderings": dict(self.renderings),
            "instance": self.instance,
            "answer": self.answer,
            "keyword": self.keyword,
            "reason": self.reason,
        }

    @classmethod
    def from_json(cls, data: JSONValue) -> Shot:
        if not isinstance(data, dict):
            raise UsageError("a stored few-shot example is not a JSON object")
        schema, renderings = data.get("schema"), data.get("renderings")
        answer, keyword = data.get("answer"), data.get("keyword")
        if not (isinstance(schema, dict | bool) and isinstance(renderings, dict)
                and isinstance(answer, str | None) and isinstance(keyword, str | None)):
            raise UsageError("malformed stored few-shot example: its schema, renderings, answer "
                             "or keyword is missing or of the wrong type")
        try:
            return cls(
                schema_id=str(data["schema_id"]),
                schema=schema,
                renderings={str(k): str(v) for k, v in renderings.items()},
                instance=data["instance"],
                answer=answer,
                keyword=keyword,
                reason=str(data.get("reason", "")),
            )
        except KeyError as exc:
            raise UsageError(f"malformed stored few-shot example: {exc}") from None


def is_array_root(schema: Schema | bool) -> bool:
    kind = schema.get("type") if isinstance(schema, dict) else None
    return kind == "array" or (isinstance(kind, list) and "array" in kind)


def object_schema(schema: JSONValue) -> Schema:
    """Boolean schemas as their object equivalents (engines and the
    validator factory take objects)."""
    if schema is True:
        return {}
    if schema is False:
        return {"not": {}}
    if not isinstance(schema, dict):
        raise UsageError(f"a schema must be an object or a boolean, not {type(schema).__name__}")
    return schema


def typed_schema(schema: JSONValue) -> Schema | None:
    """The schema to hand a format's dump/parse for typing (None for the
    boolean schemas, which say nothing about types)."""
    return schema if isinstance(schema, dict) else None


def _read_back(value: JSONValue, schema: Schema | bool, fmt: str) -> list[Violation] | None:
    """The violations of ``value`` once written in output format ``fmt`` and
    parsed back; None when the format cannot carry it."""
    out = output_formats.get(fmt)()
    typed = typed_schema(schema)
    try:
        text = out.dump(value, typed)
    except Exception:  # noqa: BLE001 - a value the format cannot write is simply not usable
        return None
    parsed = out.parse(text, typed)
    if not parsed.ok:
        return None
    return validator_for(object_schema(schema)).violations(parsed.value)


def shown_faithfully(
    value: JSONValue, schema: Schema | bool, fmt: str, keyword: str | None = None
) -> bool:
    """True when ``value`` written in output format ``fmt`` and read back
    keeps its verdict: valid stays valid; an invalid value still violates
    ``keyword``."""
    violations = _read_back(value, schema, fmt)
    if violations is None:
        return False
    if keyword is None:
        return not violations
    return any(v.keyword == keyword for v in violations)


def keeps_violations(
    value: JSONValue, schema: Schema | bool, fmt: str, expected: set[tuple[str, str]]
) -> bool:
    """True when ``value`` written in output format ``fmt`` and read back
    violates exactly the (keyword, schema path) occurrences ``expected``."""
    violations = _read_back(value, schema, fmt)
    return violations is not None and {(v.keyword, v.schema_path) for v in violations} == expected


def _rendering(case: CaseLike, fmt: str) -> str:
    try:
        return str(case.renderings[fmt])
    except (KeyError, TypeError):
        raise UsageError(f"schema {case.id} has no {fmt} rendering") from None


def _size(case: CaseLike) -> int:
    return len(json.dumps(case.schema, ensure_ascii=False))


@dataclass
class ShotPool:
    """Ranks the dataset's schemas once; hands out shots per test item."""

    cases: Sequence[CaseLike]
    schema_formats: tuple[str, ...]
    output_formats: tuple[str, ...]
    _ranked: list[CaseLike] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        # a shot is shown in every schema format the task runs, so a schema
        # missing one (real-world schemas may) is no example
        usable = [c for c in self.cases
                  if c.invalid_instances and self._complete(c) and self._valid_ok(c)]
        # an empty sample ([] or {}) shows nothing of the schema: ranked last
        self._ranked = sorted(usable, key=lambda c: (c.valid_instance in ([], {}), _size(c), c.id))

    def _complete(self, case: CaseLike) -> bool:
        try:
            return all(f in case.renderings for f in self.schema_formats)
        except TypeError:
            return False

    def _valid_ok(self, case: CaseLike) -> bool:
        return all(shown_faithfully(case.valid_instance, case.schema, f) for f in self.output_formats)

    def _invalid_ok(self, case: CaseLike, inv: InvalidLike) -> bool:
        return all(
            shown_faithfully(inv.instance, case.schema, f, inv.keyword) for f in self.output_formats
        )

    @property
    def candidates(self) -> list[CaseLike]:
        """The usable schemas, in the static ranking's order."""
        return list(self._ranked)

    def invalid_for(self, case: CaseLike, keyword: str) -> InvalidLike | None:
        """A violation of ``keyword`` in ``case`` that every output format
        carries (the first in document order), or None."""
        for inv in case.invalid_instances:
            if inv.keyword == keyword and self._invalid_ok(case, inv):
                found: InvalidLike = inv
                return found
        return None

    def shot(self, case: CaseLike, instance: JSONValue, reason: str, **kw: Any) -> Shot:
        renderings = {f: _rendering(case, f) for f in self.schema_formats}
        return Shot(case.id, case.schema, renderings, instance, reason=reason, **kw)

    def _pick(self, exclude: set[str], arrays: bool | None, k: int) -> list[CaseLike]:
        out: list[CaseLike] = []
        if k <= 0:
            return out
        for case in self._ranked:
            if case.id in exclude or (arrays is not None and is_array_root(case.schema) != arrays):
                continue
            out.append(case)
            if len(out) == k:
                break
        return out

    def generation(
        self, exclude_id: str, k: int = GENERATION_SHOTS, also_exclude: Iterable[str] = ()
    ) -> tuple[Shot, ...]:
        """k shots: array roots and other short schemas alternating (the
        paper's Listing 6 shows array, string, then the test schema)."""
        exclude = {exclude_id, *also_exclude}
        arrays = self._pick(exclude, True, (k + 1) // 2)
        others = self._pick(exclude, False, k - len(arrays))
        chosen = _interleave(arrays, others)
        if len(chosen) < k:
            taken = {c.id for c in chosen} | exclude
            chosen += self._pick(taken, None, k - len(chosen))
        if len(chosen) < k:
            raise UsageError(f"not enough usable schemas for {k} generation shots")
        return tuple(
            self.shot(c, c.valid_instance, _reason(c)) for c in chosen
        )

    def validation(self, exclude_id: str) -> tuple[Shot, ...]:
        """Two shots: a short array-root schema with its valid sample (yes),
        then another short schema with a one-keyword violation (no)."""
        yes = self._pick({exclude_id}, True, 1) or self._pick({exclude_id}, None, 1)
        if not yes:
            raise UsageError("not enough usable schemas for validation shots")
        for case in self._pick({exclude_id, yes[0].id}, None, len(self._ranked)):
            inv = self._preferred_invalid(case)
            if inv is not None:
                return (
                    self.shot(yes[0], yes[0].valid_instance, _reason(yes[0]), answer="yes"),
                    self.shot(case, inv.instance, _reason(case), answer="no", keyword=inv.keyword),
                )
        raise UsageError("no usable invalid sample for the 'no' validation shot")

    def _preferred_invalid(self, case: CaseLike) -> InvalidLike | None:
        faithful = [i for i in case.invalid_instances if self._invalid_ok(case, i)]
        rank = {kw: n for n, kw in enumerate(KEYWORD_PREFERENCE)}
        faithful.sort(key=lambda i: rank.get(i.keyword, len(rank)))
        return faithful[0] if faithful else None


def _interleave(first: list[CaseLike], second: list[CaseLike]) -> list[CaseLike]:
    out: list[CaseLike] = []
    for n in range(max(len(first), len(second))):
        out += first[n : n + 1] + second[n : n + 1]
    return out


def _reason(case: CaseLike) -> str:
    root = "array root" if is_array_root(case.schema) else "short schema"
    return f"{root}, {_size(case)} chars of JSON"


def shot_ids(shots: Iterable[Shot]) -> list[str]:
    return [s.schema_id for s in shots]
