"""``conformbench demo``: rescore the replays shipped with the package into the
full reports, in seconds and without a model."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from conformbench.cli.score import FailIf, Verbose, report_outcome
from conformbench.reports.publish import publish
from conformbench.runner.shipped import shipped_replay, shipped_replays
from conformbench.scoring.gate import parse_gate

__all__ = ["AGAINST", "register"]

#: shipped replays that re-decode items of others, rescored against them
#: (the report's "Decoding against decoding" section)
AGAINST: dict[str, tuple[str, ...]] = {
    "concodeeval-beam": ("concodeeval-generation", "concodeeval-validation"),
}


def demo(
    names: Annotated[list[str] | None, typer.Argument(
        metavar="NAME", help="Shipped replays to rescore (default: all; see --list).")] = None,
    out: Annotated[Path, typer.Option("--out", metavar="DIR", help="Report directory root.")] = Path(
        "conformbench-out/demo"),
    list_only: Annotated[bool, typer.Option("--list", help="List shipped replays.")] = False,
    fail_if: FailIf = [],
    json_summary: Annotated[bool, typer.Option("--json", help="Machine-readable summary.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", help="No terminal output but errors.")] = False,
    verbose: Verbose = False,
) -> None:
    """Rescore the shipped full-size replays (generated live with the embedded
    SmolLM2-135M) into report.md/html/json, one folder per replay."""
    if list_only:
        for name, path in shipped_replays().items():
            typer.echo(f"{name}\t{path}")
        return
    chosen = names or list(shipped_replays())
    paths = [shipped_replay(name) for name in chosen]  # did-you-mean before any work
    gates = [parse_gate(text) for text in fail_if]
    tripped = False
    for name, path in zip(chosen, paths, strict=True):
        against = [shipped_replay(other) for other in AGAINST.get(name, ())]
        done = publish([path], out / name, gates, against=against or None)
        try:
            report_outcome(done, quiet, json_summary, {"replay": name}, verbose)
        except typer.Exit:
            tripped = True
    if tripped:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
