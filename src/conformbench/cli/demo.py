"""``conformbench demo``: rescore the replays shipped with the package into the
full reports without a model (about half a minute for all eight on a 2-core
machine; a line per replay as it goes)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated

import typer

from conformbench import stopping
from conformbench.cli.score import FailIf, Verbose, report_outcome
from conformbench.errors import ConformbenchError, GateNotEvaluableError, UsageError
from conformbench.records.results import ScoredRun
from conformbench.reports.publish import publish
from conformbench.runner.progress import stderr_console
from conformbench.runner.shipped import shipped_replay, shipped_replays
from conformbench.scoring.gate import ARM_METRICS, Gate, GateCheck, check_metric, evaluate_gates, parse_gate
from conformbench.scoring.sections import sections

__all__ = ["AGAINST", "register"]

#: shipped replays that re-decode items of others, rescored against them
#: (the report's "Decoding against decoding" section)
AGAINST: dict[str, tuple[str, ...]] = {
    "concodeeval-beam": ("concodeeval-beam-greedy",),
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
    for gate in gates:  # a misspelt metric fails before any work too
        check_metric(gate, sorted({*ARM_METRICS, *(m for n in sections.names() for m in sections.get(n)().gate_metrics)}))
    applied: set[str] = set()
    tripped = False
    for i, (name, path) in enumerate(zip(chosen, paths, strict=True), 1):
        stopping.checkpoint()  # a stop a finalizer swallowed lands between two replays
        if not quiet and len(chosen) > 1:
            stderr_console().print(f"demo: rescoring {name} ({i} of {len(chosen)})", highlight=False, markup=False)
        against = [shipped_replay(other) for other in AGAINST.get(name, ())]
        done = publish([path], out / name, [], against=against or None)
        # each gate is checked on the replays that have its task, metric and conditions
        found = {gate.text: _checks(gate, done.run) for gate in gates}
        applied |= {text for text, checks in found.items() if checks is not None}
        try:
            report_outcome(dataclasses.replace(done, checks=[c for cs in found.values() for c in cs or []]),
                           quiet, json_summary, {"replay": name}, verbose)
        except typer.Exit:
            tripped = True
    unused = [gate.text for gate in gates if gate.text not in applied]
    if unused:
        raise UsageError(f"--fail-if {unused[0]!r}: no replay here has it (its task, metric and conditions "
                         f"together): {', '.join(chosen)}")
    if tripped:
        raise typer.Exit(1)


def _checks(gate: Gate, run: ScoredRun) -> list[GateCheck] | None:
    """The gate's checks on one replay, or None when that replay lacks its
    task, metric or conditions."""
    try:
        return evaluate_gates([gate], run)
    except GateNotEvaluableError:  # the replay has it, n/a: never a silent pass
        raise
    except ConformbenchError:
        return None


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
