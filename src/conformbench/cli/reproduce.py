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
    base_url: Annotated[str | None, typer.Option("--base-url", metavar="URL", help=(
        "The server of the replay's HTTP models (a replay never chooses where a request goes)."))] = None,
    api_key_env: Annotated[str | None, typer.Option("--api-key-env", metavar="VAR", help=(
        "Environment variable holding the API key for --base-url (the replay's is never used)."))] = None,
    model: Annotated[str | None, typer.Option("--model", metavar="PATH", help=(
        "The model file for a replay whose model was loaded from a file (not the embedded or an alias)."))] = None,
    dataset: Annotated[Path | None, typer.Option("--dataset", metavar="PATH", help=(
        "The data of a replay's task that read a dataset outside conformbench's shipped data."))] = None,
    shots_from: Annotated[Path | None, typer.Option("--shots-from", metavar="FILE", help=(
        "The zero-shot replay of a few-shot task whose shots file is outside the shipped data."))] = None,
) -> None:
    """Rerun REPLAY's spec (models, tasks, decoding, threads) on this machine
    and print the share of identical texts, the verdicts that flipped, and
    each headline metric's shift with its paired interval. Greedy texts are
    identical only on the same llama.cpp build, CPU features and threads;
    the replay headers' build facts say which of those differ. A replay is
    data: the server, the key's variable, a model file and a dataset are
    the command line's, never the replay's (shown when they differ); a
    replay that needs one and is not given it is refused in one line."""
    done = api.reproduce(replay, out=out, n=n, detect=detect, quiet=quiet, base_url=base_url,
                         api_key_env=api_key_env, model=model, dataset=dataset, shots_from=shots_from)
    if json_summary:
        print_json(done.model_dump(mode="json"))
        return
    for line in reproduction_lines(done):
        typer.echo(line)


def register(app: typer.Typer) -> None:
    app.command("reproduce")(reproduce)
