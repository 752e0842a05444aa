"""``conformbench score``: rescore replay files into reports, with CI gates."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from conformbench import api
from conformbench.cli.common import check_choice, join_names, print_json
from conformbench.records.markdown_escape import plain_text
from conformbench.reports.publish import Published, headline_lines
from conformbench.reports.verdict import TERMINAL_HEADLINE
from conformbench.runner.progress import stderr_console
from conformbench.tasks.matchers import MATCHERS, NORMALIZERS

__all__ = ["DETECT_HELP", "FAIL_IF_HELP", "FORMAT_ASSERTION_HELP", "VERBOSE_HELP", "FailIf", "Verbose", "register", "report_outcome"]

FAIL_IF_HELP = ("Exit 1 if \\[TASK.]METRIC\\[GLOB] OP NUMBER holds for any matching condition, "
                "e.g. 'wrong_but_valid\\[constrained*] > 20%' or 'lower(gsm8k.accuracy\\[constrained*]) < 0.3' "
                "(repeatable). Exit 2 if a value it matches is n/a (it cannot be evaluated).")
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
        # each comparison's headline in bold on a terminal (rich writes no style to a pipe or a log)
        bold = "bold" if line.startswith(TERMINAL_HEADLINE) else None
        console.print(plain_text(line), highlight=False, markup=False, style=bold)
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
    match: Annotated[str | None, typer.Option(
        "--match", metavar="NAME", help=f"Rescore custom tasks with this matcher: {join_names(MATCHERS)} "
        "(default: the replay's); the report's correctness column names it.")] = None,
    normalize: Annotated[str | None, typer.Option(
        "--normalize", metavar="NAME", help=f"custom's answer normaliser: {join_names(NORMALIZERS)} "
        "(default: the replay's).")] = None,
    tolerance: Annotated[float | None, typer.Option(
        "--tolerance", metavar="X", min=0.0, help="custom with --match number: the largest difference "
        "still right (default: the replay's).")] = None,
    task_module: Annotated[list[Path], typer.Option(
        "--task-module", metavar="FILE", help="A Python module of your own tasks (a ContractTask subclass "
        "registered with @tasks.register), imported first so its replays rescore (repeatable; it runs as "
        "Python: name only files you trust; a replay never names one).")] = [],
) -> None:
    """Rescore replay files alone (no model needed) and write report.json,
    report.md, report.html, ledger.csv and quadrants.svg."""
    check_choice("--match", match, MATCHERS)
    check_choice("--normalize", normalize, NORMALIZERS)
    for module in task_module:
        import_task_module(module)
    params = {k: v for k, v in (("match", match), ("normalize", normalize), ("tolerance", tolerance))
              if v is not None}
    done = api.score(replays, out=out, fail_if=fail_if, format_assertion=format_assertion, detect=detect,
                     against=against, task_params=params)
    report_outcome(done, quiet, json_summary, verbose=verbose)


def import_task_module(path: Path) -> None:
    """Import a user's task module from its file (what --task-module names)."""
    import importlib.util
    import sys

    from conformbench.errors import UsageError

    if path.suffix != ".py" or not path.is_file():
        raise UsageError(f"--task-module {path}: expected a Python file (.py)")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"--task-module {path}: cannot import it")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(path.stem, module)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 - the user's code may raise anything: one line, exit 2
        raise UsageError(f"--task-module {path}: importing it failed: {type(exc).__name__}: {exc}") from None


def register(app: typer.Typer) -> None:
    app.command("score")(score)
