"""``conformbench validate SCHEMA INSTANCE...``: judge instance files the way
scoring judges model output (strict output-format parsers, then the
ground-truth validator), with each violation's keyword, paths, position
bucket per schema format and root-type flag.

Exit 0: every instance valid; 1: any instance invalid (or not a well-formed
document of --format); 2: bad usage, unreadable files, or an invalid or
unsatisfiable schema."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import Field

from conformbench.cli.common import print_json, read_json_file, read_text_file
from conformbench.errors import ConformbenchError
from conformbench.formats.base import output_formats
from conformbench.formats.positions import position_bucket
from conformbench.jsontypes import Schema
from conformbench.records.base import FrozenRecord
from conformbench.schemas.build import SCHEMA_FORMAT_NAMES
from conformbench.schemas.oracle import require_satisfiable
from conformbench.validation.validator import Violation, validator_for

__all__ = ["Verdict", "ViolationReport", "judge", "register", "validate"]


class ViolationReport(FrozenRecord):
    keyword: str
    instance_path: str
    schema_path: str
    message: str
    root_type: bool
    #: begin | middle | end per schema format (None: not stated there)
    positions: dict[str, str | None]


class Verdict(FrozenRecord):
    instance: str
    valid: bool
    parsed: bool
    error: str | None = None
    violations: list[ViolationReport] = Field(default_factory=list)


def _positions(schema: Schema, schema_path: str) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for fmt in SCHEMA_FORMAT_NAMES:
        try:
            out[fmt] = position_bucket(schema, schema_path, fmt)
        except ConformbenchError:  # a format that cannot render this schema
            out[fmt] = None
    return out


def _report(schema: Any, v: Violation) -> ViolationReport:
    positions = _positions(schema, v.schema_path) if isinstance(schema, dict) else {}
    return ViolationReport(
        keyword=v.keyword, instance_path=v.instance_path, schema_path=v.schema_path,
        message=v.message, root_type=v.root_type, positions=positions,
    )


def judge(schema: Any, path: Path, format_name: str) -> Verdict:
    """Parse one instance file in ``format_name`` and validate it."""
    text = read_text_file(path)
    parsed = output_formats.get(format_name)().parse(text, schema if isinstance(schema, dict) else None)
    if not parsed.ok:
        return Verdict(instance=str(path), valid=False, parsed=False,
                       error=parsed.error or f"not a well-formed {format_name} document")
    found = validator_for(schema).violations(parsed.value)
    return Verdict(instance=str(path), valid=not found, parsed=True,
                   violations=[_report(schema, v) for v in found])


def _print_text(verdict: Verdict) -> None:
    if verdict.valid:
        typer.echo(f"{verdict.instance}: valid")
        return
    if not verdict.parsed:
        typer.echo(f"{verdict.instance}: invalid: {verdict.error}")
        return
    typer.echo(f"{verdict.instance}: invalid ({len(verdict.violations)} violations)")
    for v in verdict.violations:
        where = " ".join(f"{fmt}={pos or '-'}" for fmt, pos in v.positions.items())
        flag = " [root type]" if v.root_type else ""
        typer.echo(f"  {v.keyword} at {v.instance_path or '/'} (schema {v.schema_path}){flag}: "
                   f"{v.message}")
        if where:
            typer.echo(f"    position: {where}")


def validate(
    schema_file: Annotated[Path, typer.Argument(help="A JSON Schema file (JSON).", metavar="SCHEMA")],
    instances: Annotated[list[Path], typer.Argument(help="Instance files.", metavar="INSTANCE...")],
    format_name: Annotated[str, typer.Option(
        "--format", "-f", help="Format of the instance files: json, yaml or xml.")] = "json",
    as_json: Annotated[bool, typer.Option("--json", help="Print every verdict as JSON.")] = False,
) -> None:
    """Validate instance files against a schema; exit 1 if any is invalid."""
    output_formats.get(format_name)  # unknown format: did-you-mean, exit 2
    schema = read_json_file(schema_file)
    validator_for(schema)  # SchemaError: one line, exit 2
    require_satisfiable(schema)
    verdicts = [judge(schema, path, format_name) for path in instances]
    if as_json:
        print_json([v.model_dump(mode="json") for v in verdicts])
    else:
        for verdict in verdicts:
            _print_text(verdict)
    if not all(v.valid for v in verdicts):
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("validate")(validate)
