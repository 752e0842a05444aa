"""``conformbench render SCHEMA_FILE --format FMT``: show a schema the way a
prompt shows it (json, yaml, xml, python, nl)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from conformbench.cli.common import names_of, read_json_file
from conformbench.formats.base import schema_formats
from conformbench.schemas.oracle import require_satisfiable
from conformbench.validator.schema_validator import check_schema

__all__ = ["register", "render"]


def render(
    schema_file: Annotated[Path, typer.Argument(help="A JSON Schema file (JSON).", metavar="SCHEMA_FILE")],
    format_name: Annotated[
        str, typer.Option("--format", "-f", metavar="NAME", help=f"Schema format: {names_of(schema_formats)}.")
    ] = "json",
) -> None:
    """Print the schema rendered in one schema format."""
    renderer = schema_formats.get(format_name)()  # unknown name: did-you-mean, exit 2
    schema = read_json_file(schema_file)
    check_schema(schema)
    # a prompt built from a schema no instance satisfies measures nothing
    require_satisfiable(schema)
    text = renderer.render(schema)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def register(app: typer.Typer) -> None:
    app.command("render")(render)
