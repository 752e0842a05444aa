"""``conformbench import inspect LOG... --out DIR``: logs of conformbench's
Inspect AI tasks as a replay (then ``conformbench score DIR/replay.jsonl``)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer

from conformbench.cli.common import print_json
from conformbench.cli.imports.group import import_app
from conformbench.importers.inspect_log import import_inspect

#: a subcommand of ``import``: the decorator below adds it to the group (cli/imports/group.py)
__all__: list[str] = []


@import_app.command("inspect")
def inspect_logs(
    logs: Annotated[list[Path], typer.Argument(help="Inspect logs (.eval or .json) of conformbench/... tasks.")],
    out: Annotated[Path, typer.Option("--out", help="Directory for replay.jsonl (must not hold one).")],
    json_summary: Annotated[bool, typer.Option("--json", help="Print a machine-readable summary.")] = False,
) -> None:
    """Import logs of `inspect eval conformbench/<task>` runs (one model), so
    the paired comparisons, ledger and report apply."""
    done = import_inspect(logs, out)
    if json_summary:
        print_json({**asdict(done), "replay": str(done.replay)})
        return
    shown = "; ".join(f"{t}: {', '.join(c)}" for t, c in done.conditions.items())
    typer.echo(f"imported {done.logs} Inspect logs, {done.generations} generations ({done.errors} errors): {shown}")
    typer.echo(f"wrote {done.replay}; score it with: conformbench score {done.replay}")

