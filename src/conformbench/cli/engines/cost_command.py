"""``conformbench engines cost`` (registered by group.py): what a
grammar costs on a serving engine, beside what it buys. The flags become
``api.CostOptions``, ``api.cost`` measures; this module prints its result."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from conformbench import api
from conformbench.api.serving import CostResult
from conformbench.backends.openai.backend import AUTO_DIALECT
from conformbench.backends.openai.dialects import dialect_names
from conformbench.cli.common import check_choice, join_names, split_values
from conformbench.errors import UsageError
from conformbench.records.spec import DEFAULT_LOCAL_ENGINE
from conformbench.runner.progress import console as wide_console
from conformbench.serving.fail_if import COST_METRICS
from conformbench.serving.journal import JOURNAL_NAME
from conformbench.serving.journal_rows import MAX_N, MAX_REPEATS
from conformbench.serving.measure import CACHES
from conformbench.serving.report import MIN_ANSWERS, CostReport, RatioSpread

__all__ = ["cost", "lost_warning"]


def _levels(values: list[str]) -> tuple[int, ...]:
    texts = split_values(values)
    if len(texts) > 16 or any(len(v) > 6 or not v.isdigit() for v in texts):
        raise UsageError(f"--concurrency takes up to 16 whole numbers, e.g. 1,4,16, not {','.join(values)[:80]!r}")
    if len({int(v) for v in texts}) != len(texts):
        raise UsageError("--concurrency names a level twice")
    return tuple(int(v) for v in texts) or (1, 4)


def _one(flag: str, values: list[str]) -> str | None:
    if len(values) > 1:
        raise UsageError(f"{flag} is given {len(values)} times: give it once")
    return values[0] if values else None


def _ratio(r: RatioSpread) -> str:
    if r.median is None:
        return f"n/a (<{MIN_ANSWERS} answers)" if r.thin_repeats else "-"
    return f"{r.median:.2f}" + (f" ({r.low:.2f}-{r.high:.2f})" if len(r.per_repeat) > 1 else "")


def _table(report: CostReport) -> Table:
    arms = {(a.concurrency, a.arm): a for a in report.arms}
    table = Table("concurrency", "cache", "req/s on/off", "TTFT on/off", "TPOT on/off", "valid off", "valid on",
                  "errors off/on")
    for c in report.comparisons:
        off, on = arms.get((c.concurrency, "off")), arms.get((c.concurrency, c.arm))
        errors = f"{off.errors if off else '-'}/{on.errors if on else '-'}"
        table.add_row(str(c.concurrency), c.cache, _ratio(c.throughput_ratio), _ratio(c.ttft_ratio),
                      _ratio(c.tpot_ratio), f"{c.validity_off.k}/{c.validity_off.n}",
                      f"{c.validity_on.k}/{c.validity_on.n}", errors)
    return table


def lost_warning(report: CostReport) -> str | None:
    """The warning line when any finished batch lost requests."""
    if not report.lost:
        return None
    total = sum(a.n for a in report.arms)
    return (f"warning: {report.lost} of {total} requests gave no answer (first: {report.lost_example}); they are "
            f"counted as errors, and a ratio whose arm kept fewer than {MIN_ANSWERS} answers is n/a: see "
            f"{JOURNAL_NAME}")


def _summary(report: CostReport, paths: list[Path]) -> dict[str, object]:
    return {"complete": report.complete, "lost": report.lost, "files": [str(p) for p in paths],
            "comparisons": [c.model_dump(mode="json") for c in report.comparisons],
            "arms": [a.model_dump(mode="json") for a in report.arms]}


_REPEATS = "Times each batch is measured (the ratios' spread)."
_CAP = "Token cap per answer."
_TIMEOUT = ("Seconds a request may take in all, its wait in the server's queue and streaming included "
            "(a server that decodes one request at a time makes the last of C wait for the others).")
_SEED = "Sampling and arrival seed."


def cost(
    out: Annotated[Path, typer.Option("--out", metavar="DIR", help=f"Directory for report.json, report.md, "
                                      f"latency.svg and the journal {JOURNAL_NAME}.")],
    base_url: Annotated[list[str], typer.Option(
        "--base-url", metavar="URL", help="OpenAI-compatible server URL ending in /v1 (`conformbench serve` "
        "starts one on http://127.0.0.1:8000/v1).")] = [],
    model: Annotated[list[str], typer.Option("--model", metavar="MODEL", help=(
        "The served model's name; with --backend llamacpp, the GGUF (a path or a name)."))] = [],
    backend: Annotated[str, typer.Option("--backend", metavar="NAME", help=(
        "openai (a server at --base-url) or llamacpp (the model in this process, concurrency 1)."))] = "openai",
    engine: Annotated[str | None, typer.Option("--engine", metavar="NAME", help=(
        f"With --backend llamacpp: the grammar engine (default {DEFAULT_LOCAL_ENGINE})."))] = None,
    threads: Annotated[int | None, typer.Option(
        "--threads", metavar="N", min=1, max=1024, help="With --backend llamacpp: CPU threads.")] = None,
    concurrency: Annotated[list[str], typer.Option(
        "--concurrency", metavar="LEVELS", help="Requests in flight, e.g. 1,4,16 (default 1,4).")] = [],
    n: Annotated[int, typer.Option("-n", "--n", metavar="N", min=1, max=MAX_N, help="Prompts per batch.")] = 4,
    repeats: Annotated[int, typer.Option("--repeats", metavar="R", min=1, max=MAX_REPEATS - 1, help=_REPEATS)] = 2,
    cache: Annotated[list[str], typer.Option(
        "--cache", metavar="STATE", help=f"Grammar cache states to measure: {join_names(CACHES)} "
        "(default both): warm = each schema as it is, sent once first; cold = each request's schema unique.")] = [],
    rate: Annotated[float | None, typer.Option(
        "--rate", metavar="R", min=0.001, max=1e6, help="Poisson arrivals at R requests/s (seeded); "
        "default: a closed loop at the concurrency.")] = None,
    prompts_file: Annotated[Path | None, typer.Option(
        "--prompts", metavar="FILE", help='JSONL of {"prompt", "schema"} (default: BFCL v3 simple items).')] = None,
    schemas: Annotated[Path | None, typer.Option(
        "--schemas", metavar="PATH", help="A JSON Schema corpus (a folder of *.json or a JSONL of schemas, "
        "JSONSchemaBench's layout): the first N usable schemas, and the keywords the grammar dropped.")] = None,
    dialect: Annotated[str | None, typer.Option(
        "--dialect", metavar="NAME", help=f"Structured-output dialect: {join_names([AUTO_DIALECT, *dialect_names()])} "
        "(default: found by the canary).")] = None,
    max_tokens: Annotated[int, typer.Option("--max-tokens", metavar="N", min=2, max=1 << 20, help=_CAP)] = 64,
    timeout: Annotated[float, typer.Option("--timeout", metavar="SECONDS", min=0.1, max=86_400.0,
                                           help=_TIMEOUT)] = 600.0,
    seed: Annotated[int, typer.Option("--seed", metavar="INT", min=0, max=(1 << 31) - 1, help=_SEED)] = 0,
    fail_if: Annotated[list[str], typer.Option(
        "--fail-if", metavar="EXPR", help=f"Exit 1 if METRIC[GLOB] OP NUMBER holds for any comparison; metrics: "
        f"{', '.join(COST_METRICS)}; e.g. 'tpot_ratio > 1.2' or 'throughput_ratio[c16/cold] < 0.5'; "
        "exit 2 if a value it matches is n/a.")] = [],
    as_json: Annotated[bool, typer.Option("--json", help="Print a machine-readable summary on stdout.")] = False,
) -> None:
    """Measure what the server's structured decoding (or, with --backend
    llamacpp, the in-process grammar's) costs: the same prompts streamed
    with the grammar off and on (warm and cold grammar cache), at each
    concurrency level, timed per request (TTFT, TPOT), every answer
    validated against its full schema. Rerunning it resumes from DIR's journal."""
    check_choice("--dialect", dialect, [AUTO_DIALECT, *dialect_names()])
    done = api.cost(api.CostOptions(
        out=out, base_url=_one("--base-url", base_url), model=_one("--model", model), backend=backend, engine=engine,
        threads=threads, concurrency=_levels(concurrency), n=n, repeats=repeats, caches=split_values(cache),
        rate=rate, prompts_file=prompts_file, schemas=schemas, dialect=dialect, max_tokens=max_tokens,
        timeout_s=timeout, seed=seed, fail_if=tuple(fail_if), progress=not as_json,
    ))
    _say(done, as_json)
    if done.exit_code:
        raise typer.Exit(done.exit_code)


def _say(done: CostResult, as_json: bool) -> None:
    """The lost requests' warning, the summary (JSON, or a table) and each tripped gate."""
    err = wide_console(stderr=True)
    report, checks = done.report, done.checks
    warning = lost_warning(report)
    if warning is not None:
        err.print(escape(warning))
    if as_json:
        typer.echo(json.dumps({**_summary(report, done.files), "gates": [
            {"gate": c.gate.text, "label": c.label, "value": c.value, "tripped": c.tripped} for c in checks]}))
    else:
        wide_console().print(_table(report))
        err.print(escape(f"wrote {', '.join(str(p) for p in done.files)}"))
    for check in checks:
        if check.tripped:
            err.print(escape(f"gate tripped: {check.describe()}"))
