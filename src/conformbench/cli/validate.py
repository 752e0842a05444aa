"""``conformbench validate SCHEMA INSTANCE...``: judge instance files the way
scoring judges model output (strict output-format parsers, then the
ground-truth validator; ``format`` an annotation unless --format-assertion), with each violation's keyword, paths and root-type
flag, and with ``--positions`` its position bucket per schema format (each
schema format is rendered once for all the violations).

Exit 0: every instance valid; 1: any instance invalid (or not a well-formed
document of --format); 2: bad usage, unreadable files, or an invalid or
unsatisfiable schema. The judging is ``schemas.judge``'s, imported when the
command runs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from conformbench.cli.common import names_of, print_json, read_json_file
from conformbench.formats.base import output_formats

if TYPE_CHECKING:
    from conformbench.schemas.judge import InstanceReport

__all__ = ["register", "validate"]


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
    from conformbench.schemas.judge import format_of, judge
    from conformbench.schemas.oracle import require_satisfiable
    from conformbench.validator.schema_validator import validator_for

    if format_name is not None:
        output_formats.get(format_name)  # unknown format: did-you-mean, exit 2
    schema = read_json_file(schema_file)
    # SchemaError: one line, exit 2
    validator = validator_for(schema, formats="assert" if format_assertion else "annotate")
    require_satisfiable(schema)
    # no --format: each file in the format its name says (json when it says none)
    verdicts = [judge(schema, path, format_name or format_of(path), positions, validator) for path in instances]
    if as_json:
        print_json([v.model_dump(mode="json") for v in verdicts])
    else:
        for verdict in verdicts:
            _print_text(verdict)
    if not all(v.valid for v in verdicts):
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("validate")(validate)
