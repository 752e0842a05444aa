"""``conformbench score``: rescore replay files into reports, with CI gates."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from conformbench import api
from conformbench.cli.common import print_json
from conformbench.records.markdown_escape import plain_text
from conformbench.reports.publish import Published, headline_lines
from conformbench.runner.progress import stderr_console

__all__ = ["DETECT_HELP", "FAIL_IF_HELP", "FORMAT_ASSERTION_HELP", "VERBOSE_HELP", "FailIf", "Verbose", "register", "report_outcome"]

FAIL_IF_HELP = ("Exit 1 if \\[TASK.]METRIC\\[GLOB] OP NUMBER holds for any matching condition, "
                "e.g. 'wrong_but_valid\\[constrained*] > 20%' or 'lower(gsm8k.accuracy\\[constrained*]) < 0.3' "
                "(repeatable).")
FailIf = Annotated[list[str], typer.Option("--fail-if", metavar="EXPR", help=FAIL_IF_HELP)]
DETECT_HELP = ("The difference, in points, each comparison states the items needed for "
               "(80% power, exact McNemar test, alpha 0.05; default 10).")
FORMAT_ASSERTION_HELP = ("Check `format` (each draft's format vocabulary) when scoring; by default it is an "
                         "annotation, JSON Schema 2020-12's default and the ConCodeEval paper's.")


VERBOSE_HELP = "Print every warning in full and every headline metric (default: one line per kind of warning)."
Verbose = Annotated[bool, typer.Option("--verbose", "-v", help=VERBOSE_HELP)]


def report_outcome(done: Published, quiet: bool, json_summary: bool,
                   extra: dict[str, object] | None = None, verbose: bool = False) -> None:
    """Print the outcome (terminal lines, --json summary, gate verdicts) and
    exit 1 if a gate tripped."""
    console = stderr_console(quiet)
    for line in headline_lines(done.run, verbose):
        console.print(plain_text(line), highlight=False, markup=False)
    console.print(f"reports: {done.files.markdown.parent}/ (report.md, report.html, "
                  "report.json, ledger.csv, quadrants.svg)", highlight=False, markup=False)
    for check in done.tripped:
        # gate verdicts are shown even with --quiet: they are why CI failed
        typer.echo(plain_text(f"conformbench: gate tripped: {check.describe()}"), err=True)
    if json_summary:
        print_json({**(extra or {}), **done.summary()})
    if done.tripped:
        raise typer.Exit(1)


def score(
    replays: Annotated[list[Path], typer.Argument(metavar="REPLAY", help="Replay files (replay.jsonl).")],
    out: Annotated[Path | None, typer.Option(
        "--out", metavar="DIR", help="Report directory (default: the first replay's directory).")] = None,
    fail_if: FailIf = [],
    detect: Annotated[float | None, typer.Option("--detect", metavar="PTS", help=DETECT_HELP)] = None,
    json_summary: Annotated[bool, typer.Option(
        "--json", help="Print a machine-readable summary on stdout.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", help="No terminal output but errors.")] = False,
    verbose: Verbose = False,
    format_assertion: Annotated[bool | None, typer.Option(
        "--format-assertion/--no-format-assertion", show_default=False,
        help=FORMAT_ASSERTION_HELP + " Default: as the replays' run spec says (annotations unless the run "
        "asked for --format-assertion).")] = None,
    against: Annotated[list[Path], typer.Option(
        "--against", metavar="REPLAY", help="Replays of another decoding of the same items (e.g. the shipped "
        "greedy ones beside a --beams run): the report pairs them with REPLAY by item and condition, "
        "with paired intervals per condition (repeatable).")] = [],
) -> None:
    """Rescore replay files alone (no model needed) and write report.json,
    report.md, report.html, ledger.csv and quadrants.svg."""
    done = api.score(replays, out=out, fail_if=fail_if, format_assertion=format_assertion, detect=detect,
                     against=against)
    report_outcome(done, quiet, json_summary, verbose=verbose)


def register(app: typer.Typer) -> None:
    app.command("score")(score)
