"""``conformbench export inspect REPLAY... --out DIR``: scored replays as
Inspect AI eval logs (open them with ``inspect view --log-dir DIR``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from conformbench.cli.common import print_json

__all__ = ["export_app", "register"]

export_app = typer.Typer(help="Write scored replays in another tool's format.", no_args_is_help=True)


@export_app.command("inspect")
def inspect_logs(
    replays: Annotated[list[Path], typer.Argument(help="Replay files (scored as `score` does).")],
    out: Annotated[Path, typer.Option("--out", metavar="DIR", help="Directory for the logs.")],
    log_format: Annotated[str, typer.Option("--format", metavar="FORMAT", help="Log file format: eval or json.")] = "eval",
    json_summary: Annotated[bool, typer.Option("--json", help="Print a machine-readable summary.")] = False,
) -> None:
    """One Inspect AI log per task × model × condition, tied by one eval set
    id: every item a sample with its messages, output, scores (valid, correct,
    wrong_but_valid) and metadata; the intervals and paired comparisons in the
    results. Needs the `inspect` extra."""
    from conformbench.exporters.inspect_log import export_inspect

    done = export_inspect(replays, out, log_format=log_format)
    if json_summary:
        print_json({"eval_set_id": done.eval_set_id, "logs": [str(p) for p in done.logs], "samples": done.samples})
        return
    logs = f"{len(done.logs)} Inspect log{'' if len(done.logs) == 1 else 's'}"
    typer.echo(f"wrote {logs} ({done.samples} samples, eval set {done.eval_set_id}) "
               f"to {out}; view them with: inspect view --log-dir {out}")


def register(app: typer.Typer) -> None:
    app.add_typer(export_app, name="export")
