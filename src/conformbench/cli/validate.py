"""``conformbench validate SCHEMA INSTANCE...``: judge instance files the way
scoring judges model output (strict output-format parsers, then the
ground-truth validator; ``format`` an annotation unless --format-assertion), with each violation's keyword, paths and root-type
flag, and with ``--positions`` its position bucket per schema format (each
schema format is rendered once for all the violations).

Exit 0: every instance valid; 1: any instance invalid (or not a well-formed
document of --format); 2: bad usage, unreadable files, or an invalid or
unsatisfiable schema."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import Field

from conformbench.cli.common import names_of, print_json, read_json_file, read_text_file
from conformbench.formats.base import PAPER_OUTPUT_FORMATS, PAPER_SCHEMA_FORMATS, format_named_by, output_formats
from conformbench.formats.positions import positions_of
from conformbench.jsontypes import JSONValue
from conformbench.records.base import FrozenRecord
from conformbench.schemas.oracle import require_satisfiable
from conformbench.validator.patterns import pattern_stats
from conformbench.validator.schema_validator import SchemaValidator, Violation, validator_for

__all__ = ["InstanceReport", "ViolationReport", "judge", "judge_value", "register", "validate"]


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


#: what an instance file's name ending says its format is
def _format_of(path: Path) -> str:
    """The output format an instance file's name says (json when it names none)."""
    named = format_named_by(path.name)
    return named if named in PAPER_OUTPUT_FORMATS else "json"


def _print_text(verdict: InstanceReport) -> None:
    if verdict.valid:
        typer.echo(f"{verdict.instance}: valid")
        return
    if not verdict.parsed:
        typer.echo(f"{verdict.instance}: invalid: {verdict.error}")
        return
    count = len(verdict.violations)
    typer.echo(f"{verdict.instance}: invalid ({count} violation{'' if count == 1 else 's'})")
    for v in verdict.violations:
        flag = " [root type]" if v.root_type else ""
        typer.echo(f"  {v.keyword} at {v.instance_path or '/'} (schema {v.schema_path}){flag}: "
                   f"{v.message}")
        if v.positions:
            typer.echo("    position: " + " ".join(f"{fmt}={pos or '-'}" for fmt, pos in v.positions.items()))
    if verdict.pattern_fallbacks:
        typer.echo(f"  ({verdict.pattern_fallbacks} pattern matches ran on the backtracking engine, "
                   f"{verdict.pattern_timeouts} of them out of time)")


def validate(
    schema_file: Annotated[Path, typer.Argument(help="A JSON Schema file (JSON).", metavar="SCHEMA")],
    instances: Annotated[list[Path], typer.Argument(help="Instance files.", metavar="INSTANCE")],
    format_name: Annotated[str | None, typer.Option(
        "--format", "-f", metavar="NAME", show_default=False,
        help=f"Format of the instance files: {names_of(output_formats)} (default json, whatever a file's "
        "name ends in).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print every verdict as JSON.")] = False,
    positions: Annotated[bool, typer.Option(
        "--positions", help="Also say where each violated keyword sits (begin/middle/end) in each "
                            "schema format's rendering.")] = False,
    format_assertion: Annotated[bool, typer.Option(
        "--format-assertion/--no-format-assertion", help="Check `format` (each draft's format vocabulary), "
        "as conformbench.validator_for and check-jsonschema do; --no-format-assertion reads it as an "
        "annotation (JSON Schema 2020-12's default, the ConCodeEval paper's and experiments' reading).")] = True,
) -> None:
    """Validate instance files against a schema; exit 1 if any is invalid."""
    if format_name is not None:
        output_formats.get(format_name)  # unknown format: did-you-mean, exit 2
    schema = read_json_file(schema_file)
    # SchemaError: one line, exit 2
    validator = validator_for(schema, formats="assert" if format_assertion else "annotate")
    require_satisfiable(schema)
    # no --format: each file in the format its name says (json when it says none)
    verdicts = [judge(schema, path, format_name or _format_of(path), positions, validator) for path in instances]
    if as_json:
        print_json([v.model_dump(mode="json") for v in verdicts])
    else:
        for verdict in verdicts:
            _print_text(verdict)
    if not all(v.valid for v in verdicts):
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("validate")(validate)
