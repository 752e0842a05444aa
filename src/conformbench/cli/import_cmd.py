"""``conformbench import validbutwrong REPLAY --out DIR``: another tool's
replay as a conformbench replay (then ``conformbench score DIR/replay.jsonl``)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer

from conformbench.cli.common import print_json
from conformbench.importers.validbutwrong import import_validbutwrong

__all__ = ["import_app", "register"]

import_app = typer.Typer(
    help="Read another tool's replay into a conformbench replay (score it with `score`).",
    no_args_is_help=True,
)


@import_app.command("validbutwrong")
def validbutwrong(
    replay: Annotated[Path, typer.Argument(help="A validbutwrong replay (gsm8k or bfcl-simple).")],
    out: Annotated[Path, typer.Option("--out", help="Directory for replay.jsonl (must not hold one).")],
    json_summary: Annotated[bool, typer.Option("--json", help="Print a machine-readable summary.")] = False,
) -> None:
    """Import a validbutwrong 0.1 replay with the prompts it sent (rebuilt with
    the task's validbutwrong prompt style) and its engine."""
    summary = import_validbutwrong(replay, out)
    if json_summary:
        print_json({**asdict(summary), "replay": str(summary.replay)})
        return
    typer.echo(f"imported {summary.task}: {summary.items} items, {summary.generations} "
               f"generations ({summary.excluded} excluded, {summary.truncated} at their token "
               f"budget), model {summary.model}, engine {summary.engine}")
    typer.echo(f"wrote {summary.replay}; score it with: conformbench score {summary.replay}")


def register(app: typer.Typer) -> None:
    app.add_typer(import_app, name="import")
