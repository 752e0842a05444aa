"""Exception hierarchy. Every error a user can cause is a ConformbenchError;
the CLI turns it into one line on stderr and exit code 2."""

from __future__ import annotations

__all__ = [
    "BackendError",
    "CanaryFailedError",
    "ConformbenchError",
    "GateNotEvaluableError",
    "SchemaError",
    "UnknownNameError",
    "UnsupportedSchemaError",
    "UsageError",
]


class ConformbenchError(Exception):
    """Base of all errors raised on purpose by conformbench."""

    exit_code = 2


class UsageError(ConformbenchError):
    """Bad options, bad names, unreadable or malformed user files."""


class UnknownNameError(UsageError):
    """A name (task, engine, format, arm, backend...) that no registry holds."""


class SchemaError(UsageError):
    """A schema that is invalid against its metaschema or unsatisfiable."""


class UnsupportedSchemaError(ConformbenchError):
    """A constraint engine cannot compile this schema. The runner records the
    item as excluded (with this message) instead of failing the run."""

    def __init__(self, engine: str, reason: str) -> None:
        super().__init__(f"{engine} cannot compile the schema: {reason}")
        self.engine = engine
        self.reason = reason


class BackendError(ConformbenchError):
    """A model backend failed for one request after its retries ran out."""


class CanaryFailedError(ConformbenchError):
    """A constraint engine did not force the canary constant: it is not applied."""


class GateNotEvaluableError(ConformbenchError):
    """A ``--fail-if`` gate some value of which is n/a in the scored run (a
    cost a replay did not record, validity of an arm with no contract...):
    it can be neither passed nor tripped, so it is an error (exit 2), never
    a silent pass. The reports are written first."""
