"""Judging instance files the way scoring judges model output (strict
output-format parsers, then the ground-truth validator), each violation
with its keyword, paths and root-type flag, and if asked its position
bucket per schema format (each schema format rendered once for all the
violations): the library of ``conformbench validate``, which imports it
only when it runs (issue #58: a usage error or ``--help`` needs none of it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field

from conformbench.files import read_text_file
from conformbench.formats.base import PAPER_OUTPUT_FORMATS, PAPER_SCHEMA_FORMATS, format_named_by, output_formats
from conformbench.jsontypes import JSONValue
from conformbench.records.base import FrozenRecord
from conformbench.validator.patterns import pattern_stats
from conformbench.validator.schema_validator import SchemaValidator, Violation, validator_for

__all__ = ["InstanceReport", "ViolationReport", "format_of", "judge", "judge_value"]


class ViolationReport(FrozenRecord):
    keyword: str
    instance_path: str
    schema_path: str
    message: str
    root_type: bool
    #: begin | middle | end per schema format (None: not stated there);
    #: None when positions were not asked for
    positions: dict[str, str | None] | None = None


class InstanceReport(FrozenRecord):
    """What ``conformbench validate`` reports of one instance file."""

    instance: str
    valid: bool
    parsed: bool
    error: str | None = None
    violations: list[ViolationReport] = Field(default_factory=list)
    #: pattern matches of this instance that ran on the backtracking
    #: engine (patterns RE2 cannot run), and those of them that timed out
    pattern_fallbacks: int = 0
    pattern_timeouts: int = 0


def _report(v: Violation, positions: dict[str, dict[str, str | None]] | None) -> ViolationReport:
    return ViolationReport(
        keyword=v.keyword, instance_path=v.instance_path, schema_path=v.schema_path,
        message=v.message, root_type=v.root_type,
        positions=None if positions is None else positions.get(v.schema_path, {}),
    )


def judge_value(schema: Any, name: str, value: JSONValue, positions: bool = False,
                validator: SchemaValidator | None = None) -> InstanceReport:
    """Validate one parsed instance (with position buckets if asked);
    ``validator``: the schema's, when the caller already has it (else one
    that asserts ``format``, as ``validate`` and ``validator_for`` do by default)."""
    before = pattern_stats()
    found = (validator or validator_for(schema)).violations(value)
    after = pattern_stats()
    where: dict[str, dict[str, str | None]] | None = None
    if positions:
        from conformbench.formats.positions import positions_of  # every schema format's renderer: on --positions

        paths = list(dict.fromkeys(v.schema_path for v in found))
        where = {p: dict(b) for p, b in positions_of(schema, paths, PAPER_SCHEMA_FORMATS).items()} \
            if isinstance(schema, dict) else {}
    return InstanceReport(instance=name, valid=not found, parsed=True, violations=[_report(v, where) for v in found],
                          pattern_fallbacks=after.fallback_matches - before.fallback_matches,
                          pattern_timeouts=after.timeouts - before.timeouts)


def judge(schema: Any, path: Path, format_name: str, positions: bool = False,
          validator: SchemaValidator | None = None) -> InstanceReport:
    """Parse one instance file in ``format_name`` and validate it."""
    text = read_text_file(path)
    parsed = output_formats.get(format_name)().parse(text, schema if isinstance(schema, dict) else None)
    if not parsed.ok:
        return InstanceReport(instance=str(path), valid=False, parsed=False,
                              error=parsed.error or f"not a well-formed {format_name} document")
    return judge_value(schema, str(path), parsed.value, positions, validator)


def format_of(path: Path) -> str:
    """The output format an instance file's name says (json when it names none)."""
    named = format_named_by(path.name)
    return named if named in PAPER_OUTPUT_FORMATS else "json"
