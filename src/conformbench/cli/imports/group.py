"""``conformbench import validbutwrong REPLAY --out DIR``: another tool's
replay as a conformbench replay (then ``conformbench score DIR/replay.jsonl``).

This module holds the ``import`` group and what its subcommands share: the
``--out`` and ``--json`` options and how a summary is printed."""

from __future__ import annotations

from dataclasses import Field, asdict
from pathlib import Path
from typing import Annotated, Any, ClassVar, Protocol

import typer

from conformbench.cli.common import print_json
from conformbench.importers.validbutwrong import import_validbutwrong

__all__ = ["ImportSummary", "JsonFlag", "OutDir", "import_app", "print_summary", "register"]

import_app = typer.Typer(
    help="Read another tool's replay into a conformbench replay (score it with `score`).",
    no_args_is_help=True,
)

#: ``--out DIR``, where an import writes its replay.jsonl
OutDir = Annotated[Path, typer.Option("--out", help="Directory for replay.jsonl (must not hold one).")]
#: ``--json``, the summary as one JSON object instead of two lines
JsonFlag = Annotated[bool, typer.Option("--json", help="Print a machine-readable summary.")]


class ImportSummary(Protocol):
    """An importer's summary: a dataclass naming the replay it wrote."""

    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    @property
    def replay(self) -> Path: ...


def print_summary(summary: ImportSummary, json_summary: bool, imported: str) -> None:
    """``summary`` as JSON with ``--json``; else the ``imported`` line and
    where the replay is, with the command that scores it."""
    if json_summary:
        print_json({**asdict(summary), "replay": str(summary.replay)})
        return
    typer.echo(imported)
    typer.echo(f"wrote {summary.replay}; score it with: conformbench score {summary.replay}")


@import_app.command("validbutwrong")
def validbutwrong(
    replay: Annotated[Path, typer.Argument(help="A validbutwrong replay (gsm8k or bfcl-simple).")],
    out: OutDir,
    json_summary: JsonFlag = False,
) -> None:
    """Import a validbutwrong 0.1 replay with the prompts it sent (rebuilt with
    the task's validbutwrong prompt style) and its engine."""
    summary = import_validbutwrong(replay, out)
    print_summary(summary, json_summary,
                  f"imported {summary.task}: {summary.items} items, {summary.generations} "
                  f"generations ({summary.excluded} excluded, {summary.truncated} at their token "
                  f"budget), model {summary.model}, engine {summary.engine}")


def register(app: typer.Typer) -> None:
    app.add_typer(import_app, name="import")
