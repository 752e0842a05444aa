"""``conformbench reproduce``: rerun a replay's spec on this machine and say
how much of it came out the same."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from conformbench import api
from conformbench.cli.common import print_json
from conformbench.cli.score import DETECT_HELP
from conformbench.scoring.reproduce import reproduction_lines

__all__ = ["register"]


def reproduce(
    replay: Annotated[str, typer.Argument(
        metavar="REPLAY", help="A replay file, or a shipped replay's name (conformbench demo --list).")],
    out: Annotated[Path, typer.Option("--out", metavar="DIR", help="Where the rerun's replay.jsonl and "
                                      "reproduce.json go (a rerun there resumes).")] = Path(
        "conformbench-out/reproduce"),
    n: Annotated[int | None, typer.Option(
        "--n", metavar="N", help="Rerun only the first N items of each task (default: all).", min=1)] = None,
    detect: Annotated[float | None, typer.Option("--detect", metavar="PTS", help=DETECT_HELP)] = None,
    json_summary: Annotated[bool, typer.Option("--json", help="Print the comparison as JSON on stdout.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress output.")] = False,
) -> None:
    """Rerun REPLAY's spec (models, tasks, decoding, threads) on this machine
    and print the share of identical texts, the verdicts that flipped, and
    each headline metric's shift with its paired interval. Greedy texts are
    identical only on the same llama.cpp build, CPU features and threads;
    the replay headers' build facts say which of those differ."""
    done = api.reproduce(replay, out=out, n=n, detect=detect, quiet=quiet)
    if json_summary:
        print_json(done.model_dump(mode="json"))
        return
    for line in reproduction_lines(done):
        typer.echo(line)


def register(app: typer.Typer) -> None:
    app.command("reproduce")(reproduce)
