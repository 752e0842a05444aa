"""``conformbench demo``: rescore the replays shipped with the package into the
full reports without a model (about half a minute for all eight on a 2-core
machine; a line per replay as it goes)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated

import typer

from conformbench.cli.score import FailIf, Verbose, report_outcome
from conformbench.errors import ConformbenchError, UsageError
from conformbench.records.results import ScoredRun
from conformbench.reports.publish import Published, publish
from conformbench.runner.progress import stderr_console
from conformbench.runner.shipped import shipped_replay, shipped_replays
from conformbench.scoring.gate import ARM_METRICS, Gate, GateCheck, evaluate_gates, metric_table, parse_gate

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
    done: list[Published] = []
    for i, (name, path) in enumerate(zip(chosen, paths, strict=True), 1):
        if not quiet and len(chosen) > 1:
            stderr_console().print(f"demo: rescoring {name} ({i} of {len(chosen)})", highlight=False, markup=False)
        against = [shipped_replay(other) for other in AGAINST.get(name, ())]
        done.append(publish([path], out / name, [], against=against or None))
    checks = _gate_checks(gates, [d.run for d in done])
    tripped = False
    for name, one, mine in zip(chosen, done, checks, strict=True):
        try:
            report_outcome(dataclasses.replace(one, checks=mine), quiet, json_summary, {"replay": name}, verbose)
        except typer.Exit:
            tripped = True
    if tripped:
        raise typer.Exit(1)


def _checks(gate: Gate, run: ScoredRun) -> list[GateCheck] | None:
    """The gate's checks on one replay, or None when that replay lacks its
    task, metric or conditions (each gate is checked on the replays that
    have them, as a run of its own would be)."""
    try:
        return evaluate_gates([gate], run)
    except ConformbenchError:
        return None


def _gate_checks(gates: list[Gate], runs: list[ScoredRun]) -> list[list[GateCheck]]:
    """Each replay's gate checks; a gate no replay can evaluate is refused,
    naming what the replays have together (not what the first one has)."""
    out: list[list[GateCheck]] = [[] for _ in runs]
    for gate in gates:
        found = [_checks(gate, run) for run in runs]
        if all(f is None for f in found):
            known = sorted({*ARM_METRICS, *(v.metric for run in runs for r in run.results for v in metric_table(r))})
            raise UsageError(f"--fail-if {gate.text!r}: no replay here has it (its task, metric and conditions "
                             f"together); metrics known: {', '.join(known)}")
        for mine, checks in zip(out, found, strict=True):
            mine += checks or []
    return out


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
