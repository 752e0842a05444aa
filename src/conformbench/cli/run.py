"""``conformbench run``: generate live into OUT/replay.jsonl (resumable),
then score it into reports, with CI gates. With no arguments it runs the
default suite on the embedded model."""

from __future__ import annotations

import dataclasses
import inspect
import json
from pathlib import Path
from typing import Annotated, Any

import typer

from conformbench import api
from conformbench.arms.base import arms
from conformbench.backends.backend_options import declared_options
from conformbench.backends.base import backends
from conformbench.cli.common import backend_option_parameters, check_choice, join_names, names_of, split_values
from conformbench.cli.score import DETECT_HELP, FAIL_IF_HELP, FORMAT_ASSERTION_HELP, VERBOSE_HELP, report_outcome
from conformbench.engines.base import engines
from conformbench.formats.base import output_formats, schema_formats
from conformbench.records.spec import SERVER_ENGINE, RunSpec, spec_bounds
from conformbench.runner.ledger.shards import Shard
from conformbench.runner.progress import stderr_console
from conformbench.runner.run import RunSummary
from conformbench.runner.run_options import GRID, RunOptions, flags
from conformbench.tasks.base import tasks
from conformbench.tasks.matchers import MATCHERS, NORMALIZERS
from conformbench.tasks.task_options import declared_axis_options, declared_task_options

__all__ = ["register"]

_OUTPUT = "Output"


def _help_names() -> dict[str, str]:
    """What the options' help texts name, as registered now (a plugin shows up)."""
    return {"tasks": names_of(tasks), "arms": names_of(arms), "engines": names_of(engines, [SERVER_ENGINE]),
            "server": SERVER_ENGINE, "schema_formats": names_of(schema_formats),
            "output_formats": names_of(output_formats), "backends": names_of(backends),
            "matchers": join_names(MATCHERS), "normalizers": join_names(NORMALIZERS),
            "format_assertion": FORMAT_ASSERTION_HELP}


def _cli_type(annotation: str) -> Any:
    """A RunOptions field's type as typer takes it: lists for the repeatable ones."""
    types = {"tuple[str, ...]": list[str], "tuple[int, ...]": list[int], "int | None": int | None,
             "float | None": float | None, "str | None": str | None, "Path | None": Path | None,
             "bool | None": bool | None, "bool": bool}
    return types[annotation]


def _option_parameters() -> list[inspect.Parameter]:
    """A keyword parameter per RunOptions flag, then one per backend option."""
    names = _help_names()
    params = []
    for f, flag in flags():
        low, high = spec_bounds(flag.table, flag.key or f.name)  # the spec's field declares them
        kw: dict[str, Any] = {k: v for k, v in (("min", low), ("max", high)) if v is not None}
        option = typer.Option(flag.flag, *([flag.short] if flag.short else []), metavar=flag.metavar,
                              help=flag.help.format(**names), rich_help_panel=flag.panel,
                              show_default=False, **kw)
        default = [] if f.default_factory is not dataclasses.MISSING else f.default
        params.append(inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=default,
                                        annotation=Annotated[_cli_type(str(f.type)), option]))
        if f.name == "engines":  # the tasks' spec-key axes: the grid's dimensions after arm and engine
            params += _axis_parameters(names)
    params += backend_option_parameters()
    taken = frozenset(f.name for f, _ in flags()) | frozenset(declared_options()) | frozenset(declared_axis_options())
    for name, task_option in declared_task_options(taken).items():
        panel = " / ".join(f"{task} task" for task in task_option.tasks)
        option = typer.Option(task_option.cli_flag, metavar="VALUE", help=task_option.help, rich_help_panel=panel)
        kind = task_option.cli_type
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY,
                                        default=[] if task_option.repeatable else None,
                                        annotation=Annotated[kind if task_option.repeatable else kind | None, option]))
    return params


def _axis_parameters(names: dict[str, str]) -> list[inspect.Parameter]:
    """A repeatable flag per spec-key axis the registered tasks declare
    (``tasks.grid.Axis``), in the run grid's panel."""
    params = []
    for key, declared in declared_axis_options().items():
        axis = declared.axis
        option = typer.Option(axis.cli_flag, metavar=axis.metavar, rich_help_panel=GRID, show_default=False,
                              help=(axis.flag_help or axis.help).format(**names))
        params.append(inspect.Parameter(key, inspect.Parameter.KEYWORD_ONLY, default=[],
                                        annotation=Annotated[list[axis.value_type], option]))  # type: ignore[name-defined]
    return params


def _options(given: dict[str, Any]) -> RunOptions:
    """The parsed flags as the run's options."""
    fields = {f.name: (f, flag) for f, flag in flags()}
    values: dict[str, Any] = {}
    for name, value in given.items():
        if name not in fields:
            continue
        if isinstance(value, list):
            field, flag = fields[name]
            if field.type != "tuple[str, ...]":
                value = tuple(value)
            else:  # names split at commas too; a URL may hold one, so it is given once per flag
                value = split_values(value) if flag.commas else tuple(v.strip() for v in value if v.strip())
        values[name] = value
    values["attention"] = values.get("attention") or None  # the flag's absence sets nothing
    values["mask_trace"] = values.get("mask_trace") or None
    backend = declared_options()
    backend_options = tuple((k, v) for k, v in given.items() if k in backend and v is not None)
    axis_keys = declared_axis_options()
    axes = tuple((k, split_values(v) if _is_names(v) else tuple(v)) for k, v in given.items()
                 if k in axis_keys and v)
    task_options = tuple((k, split_values(v) if _is_names(v) else tuple(v) if isinstance(v, list) else v)
                         for k, v in given.items()
                         if k not in fields and k not in backend and k not in axis_keys and v is not None and v != [])
    return RunOptions(**values, backend_options=backend_options, task_options=task_options, axes=axes)


def _is_names(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def run(
    spec: Annotated[Path | None, typer.Option(
        "--spec", metavar="FILE", help="Run spec TOML file (default: the default run).",
        rich_help_panel="Run grid")] = None,
    force: Annotated[bool, typer.Option(
        "--force", help="Move a different run's replay aside and start over.", rich_help_panel=_OUTPUT)] = False,
    shard: Annotated[str | None, typer.Option(
        "--shard", metavar="K/N", rich_help_panel=_OUTPUT, help="Generate only part K of N of the items, into "
        "OUT/replay.shard-K-of-N.jsonl, so N processes or machines share one run; the run without --shard "
        "then merges the parts and writes the reports.")] = None,
    fail_if: Annotated[list[str], typer.Option(
        "--fail-if", metavar="EXPR", help=FAIL_IF_HELP, rich_help_panel=_OUTPUT)] = [],
    detect: Annotated[float | None, typer.Option(
        "--detect", metavar="PTS", help=DETECT_HELP, rich_help_panel=_OUTPUT)] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help=VERBOSE_HELP, rich_help_panel=_OUTPUT)] = False,
    **given: Any,
) -> None:
    """Run models x tasks x arms x engines x formats x shots live, appending
    every generation to OUT/replay.jsonl (a rerun resumes), then write the
    reports. The constraint canary runs first; a failure exits 2."""
    check_choice("--match", given.get("match"), MATCHERS)
    check_choice("--normalize", given.get("normalize"), NORMALIZERS)
    options = _options(given)
    if shard is None:
        done = api.run(spec, fail_if=fail_if, force=force, detect=detect, options=options)
        assert done.generation is not None and done.spec is not None
        try:
            report_outcome(done, done.spec.quiet, done.spec.json_summary, _summary_fields(done.generation), verbose)
        finally:  # last, and its exit 2 over a gate's 1: no answer at all is no measurement
            _say_failures(done.generation, done.spec.quiet)
        return
    part = Shard.parse(shard)  # the same generation as a whole run, into the part's own file
    summary, run_spec = api.generate(spec, options, fail_if=fail_if, force=force, shard=part)
    _report_part(summary, part, run_spec)
    _say_failures(summary, run_spec.quiet)


def _say_failures(summary: RunSummary, quiet: bool) -> None:
    """Failed generations, said on the terminal; exit 2 when none succeeded."""
    line, none_succeeded = summary.failure_line()
    if line is not None and (none_succeeded or not quiet):
        typer.echo(f"conformbench: {'error' if none_succeeded else 'warning'}: {line}", err=True)
    if none_succeeded:
        raise typer.Exit(2)


def _summary_fields(summary: RunSummary) -> dict[str, Any]:
    return {"replay": str(summary.replay), "generations": summary.total,
            "generated_now": summary.generated, "resumed": summary.skipped,
            "excluded": summary.excluded, "failed": summary.failed, "seconds": round(summary.seconds, 2)}


def _report_part(summary: RunSummary, part: Shard, spec: RunSpec) -> None:
    """A part writes no reports (they need every part): it says what it did
    and what to run next."""
    if spec.json_summary:
        typer.echo(json.dumps({**_summary_fields(summary), "shard": str(part)}))
    if not spec.quiet:
        stderr_console(False).print(
            f"part {part}: {summary.skipped + summary.generated} of {summary.total} items×conditions in "
            f"{summary.replay}; when every part is done, run again without --shard to merge them "
            "and write the reports")


class _RunCommand:
    """``run`` as typer sees it: its signature, rebuilt each time typer reads
    it, holds a parameter per option, with help texts naming what the
    registries hold then (a plugin registered after import shows up)."""

    __name__ = "run"
    __qualname__ = "run"
    __doc__ = run.__doc__

    @property
    def __signature__(self) -> inspect.Signature:
        sig = inspect.signature(run, eval_str=True)
        fixed = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in sig.parameters.values()
                 if p.kind is not inspect.Parameter.VAR_KEYWORD]
        # the spec file first, the options in their panels, then the run's own switches
        return sig.replace(parameters=fixed[:1] + _option_parameters() + fixed[1:])

    @property
    def __annotations__(self) -> dict[str, Any]:  # type: ignore[override]
        return {p.name: p.annotation for p in self.__signature__.parameters.values()}

    def __call__(self, **values: Any) -> None:
        run(**values)


def register(app: typer.Typer) -> None:
    app.command("run")(_RunCommand())
