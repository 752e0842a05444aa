"""``conformbench import lm-eval samples_*.jsonl --out DIR``: lm-eval's
``jsonschema_bench`` samples scored by conformbench, with where the two
readings differ."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer

from conformbench.cli.common import print_json
from conformbench.cli.imports.group import import_app
from conformbench.importers.lm_eval import import_lm_eval

#: a subcommand of ``import``: the decorator below adds it to the group (cli/imports/group.py)
__all__: list[str] = []


@import_app.command("lm-eval")
def lm_eval(
    samples: Annotated[list[Path], typer.Argument(help="lm-eval samples files (samples_<task>_<date>.jsonl).")],
    out: Annotated[Path, typer.Option("--out", help="Directory for replay.jsonl (must not hold one).")],
    model: Annotated[str, typer.Option("--model", help="Model label.")] = "lm-eval",
    json_summary: Annotated[bool, typer.Option("--json", help="Print a machine-readable summary.")] = False,
) -> None:
    """Import lm-eval jsonschema_bench samples as generation items
    (json->json prompt_only); lists where lm-eval's reading and ours differ."""
    done = import_lm_eval(samples, out, model=model)
    if json_summary:
        print_json({**asdict(done), "replay": str(done.replay), "differences_file": str(done.differences_file)})
        return
    theirs = "n/a" if done.theirs_compliance is None else f"{done.theirs_compliance:.1%}"
    typer.echo(f"imported {done.items} lm-eval samples ({', '.join(f'{t}: {n}' for t, n in done.tasks.items())}); "
               f"schema compliance: lm-eval {theirs}, conformbench {done.ours_compliance:.1%} (formats asserted)")
    typer.echo(f"{done.differences} items scored differently, listed in {done.differences_file}")
    typer.echo(f"wrote {done.replay}; score it with: conformbench score {done.replay}")

