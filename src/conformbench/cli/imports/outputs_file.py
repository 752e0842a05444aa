"""``conformbench import outputs FILE.jsonl --task NAME [--contract S] --out DIR``:
outputs generated anywhere as a replay that ``score`` reads like a run's."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from conformbench.cli.imports.group import JsonFlag, OutDir, import_app, print_summary
from conformbench.importers.outputs import import_outputs

#: a subcommand of ``import``: the decorator below adds it to the group (cli/imports/group.py)
__all__: list[str] = []


@import_app.command("outputs")
def outputs(
    source: Annotated[Path, typer.Argument(help='A JSONL file of {"item_id", "text"} lines '
                                                '(or {"item": {"question", "answer"}, "text"} for task custom).')],
    task: Annotated[str, typer.Option("--task", help="The task whose items the outputs answer.")],
    out: OutDir,
    contract: Annotated[str | None, typer.Option(
        "--contract", help="The outputs answer as JSON under this contract: condition "
                           "prompt_only[S] (default: unconstrained, a free-text answer).")] = None,
    model: Annotated[str | None, typer.Option("--model", help="Model label (default: the file's stem).")] = None,
    dataset: Annotated[Path | None, typer.Option(
        "--dataset", help="The task's dataset file (task custom with item_id lines).")] = None,
    json_summary: JsonFlag = False,
) -> None:
    """Import outputs generated anywhere, scored by the task's own checker."""
    summary = import_outputs(source, task, out, contract=contract, model=model, dataset=dataset)
    print_summary(summary, json_summary,
                  f"imported {summary.task}: {summary.items} outputs as {summary.condition} "
                  f"({summary.truncated} at their token budget; {summary.prompts_rebuilt} prompts "
                  f"rebuilt by conformbench), model {summary.model}")

