"""Ground-truth validation: violations with keyword, paths and position."""

from conformbench.validator.schema_validator import (
    SchemaValidator,
    Violation,
    check_schema,
    json_pointer,
    validator_for,
)

__all__ = ["SchemaValidator", "Violation", "check_schema", "json_pointer", "validator_for"]
