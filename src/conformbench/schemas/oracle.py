"""The instance oracle: for a schema, one valid instance, and for each
constraint keyword in it an instance that violates that keyword and nothing
else.

Both are constructive (``solver`` builds values from the keywords,
``mutate`` edits the valid instance where a keyword applies) and both are
checked by the ground-truth validator, so a returned instance is never
wrong; what the heuristics decide is only how often one is found.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from conformbench.errors import SchemaError
from conformbench.jsontypes import JSONValue, Schema
from conformbench.schemas.case import InvalidInstance, UnisolatedKeyword
from conformbench.schemas.solver.core import BudgetExceeded, Solver, Unsat
from conformbench.schemas.solver.type_handlers import TYPE_HANDLERS
from conformbench.validator.schema_validator import Remotes, validator_for

__all__ = ["InvalidSet", "OracleResult", "find_invalid", "find_valid", "require_satisfiable"]

Status = Literal["found", "unsatisfiable", "unknown", "invalid"]


@dataclass(frozen=True)
class OracleResult:
    """``found`` with an instance; ``unsatisfiable`` when a structural
    contradiction proves no instance exists; ``unknown`` when the search gave
    up; ``invalid`` when the schema fails its metaschema or has unresolvable
    references. ``reason`` says why for every status but ``found``."""

    status: Status
    instance: JSONValue = None
    reason: str = ""

    @property
    def found(self) -> bool:
        return self.status == "found"


@dataclass(frozen=True)
class InvalidSet:
    instances: list[InvalidInstance] = field(default_factory=list)
    unisolated: list[UnisolatedKeyword] = field(default_factory=list)


def find_valid(
    schema: Schema | bool, remotes: Remotes | None = None, budget: int = 6000
) -> OracleResult:
    """A valid instance of ``schema`` (checked), or why there is none.
    ``remotes`` are documents that its ``$ref``s may name by URI."""
    try:
        validator = validator_for(schema, remotes)  # type: ignore[arg-type]
    except SchemaError as exc:
        return OracleResult("invalid", reason=str(exc))
    solver = Solver(validator, TYPE_HANDLERS, budget)
    try:
        for value in solver.solve([solver.root]):
            if validator.is_valid(value):
                return OracleResult("found", value)
    except Unsat as exc:
        return OracleResult("unsatisfiable", reason=str(exc))
    except BudgetExceeded:
        return OracleResult("unknown", reason="search budget exhausted")
    except RecursionError:
        return OracleResult("unknown", reason="schema nested too deeply to solve")
    except Exception as exc:  # noqa: BLE001 - untrusted schemas: a solver failure is a recorded reason
        return OracleResult("unknown", reason=f"the solver failed: {type(exc).__name__}: {exc}")
    why = solver.incomplete[0] if solver.incomplete else "no candidate satisfied every keyword"
    return OracleResult("unknown", reason=why)


def find_invalid(schema: Schema | bool, valid: JSONValue) -> InvalidSet:
    """One single-keyword violation per constraint occurrence of ``schema``
    (``valid`` is a valid instance of it, e.g. from find_valid). Never
    raises for a schema find_valid accepted: a keyword whose search fails,
    however it fails, is listed as unisolated with the reason."""
    from conformbench.schemas.mutate import violate_each

    validator = validator_for(schema)  # type: ignore[arg-type]
    found, missing = violate_each(validator, valid)
    return InvalidSet(found, missing)


def require_satisfiable(schema: Schema | bool) -> None:
    """SchemaError (one line) for a schema that fails its metaschema or is
    provably unsatisfiable; a schema the search merely gives up on passes."""
    result = find_valid(schema)
    if result.status == "invalid":
        raise SchemaError(result.reason)
    if result.status == "unsatisfiable":
        raise SchemaError(f"the schema is unsatisfiable: {result.reason}")
