"""``conformbench engines cost`` (registered by cli/engines.py): what a
grammar costs on a serving engine, beside what it buys."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from conformbench.backends.openai.backend import AUTO_DIALECT
from conformbench.backends.openai.dialects import dialect_names
from conformbench.cli.common import check_choice, join_names, split_values
from conformbench.errors import UsageError
from conformbench.records.spec import DEFAULT_LOCAL_ENGINE
from conformbench.runner.progress import RunProgress
from conformbench.runner.progress import console as wide_console
from conformbench.runner.test_size import capped, capped_levels
from conformbench.schemas.case import ExcludedSchema
from conformbench.scoring.gate import Gate
from conformbench.serving.command import CostTarget, cost_backend, run_cost
from conformbench.serving.cost_gate import COST_METRICS, check_cost_gates, parse_cost_gate
from conformbench.serving.cost_prompts import CostPrompt, bfcl_prompts, corpus_prompts, file_prompts
from conformbench.serving.journal import JOURNAL_NAME
from conformbench.serving.local import LlamaCppSender, check_local
from conformbench.serving.measure import CACHES, CostConfig, CostSender, batch_plan
from conformbench.serving.report import CostReport, RatioSpread

__all__ = ["cost"]


def _levels(values: list[str]) -> tuple[int, ...]:
    try:
        levels = tuple(int(v) for v in split_values(values))
    except ValueError:
        raise UsageError(f"--concurrency takes whole numbers, e.g. 1,4,16, not {','.join(values)!r}") from None
    if len(set(levels)) != len(levels):
        raise UsageError("--concurrency names a level twice")
    return levels or (1, 4)


def _ratio(r: RatioSpread) -> str:
    return "-" if r.median is None else f"{r.median:.2f}" + (
        f" ({r.low:.2f}-{r.high:.2f})" if len(r.per_repeat) > 1 else "")


def _table(report: CostReport) -> Table:
    table = Table("concurrency", "cache", "req/s on/off", "TTFT on/off", "TPOT on/off", "valid off", "valid on")
    for c in report.comparisons:
        table.add_row(str(c.concurrency), c.cache, _ratio(c.throughput_ratio), _ratio(c.ttft_ratio),
                      _ratio(c.tpot_ratio), f"{c.validity_off.k}/{c.validity_off.n}",
                      f"{c.validity_on.k}/{c.validity_on.n}")
    return table


def _summary(report: CostReport, paths: list[Path]) -> dict[str, object]:
    return {"complete": report.complete, "files": [str(p) for p in paths],
            "comparisons": [c.model_dump(mode="json") for c in report.comparisons],
            "arms": [a.model_dump(mode="json") for a in report.arms]}


def cost(
    out: Annotated[Path, typer.Option("--out", metavar="DIR", help=f"Directory for report.json, report.md, "
                                      f"latency.svg and the journal {JOURNAL_NAME}.")],
    base_url: Annotated[str | None, typer.Option(
        "--base-url", metavar="URL", help="OpenAI-compatible server URL ending in /v1.")] = None,
    model: Annotated[str | None, typer.Option("--model", metavar="MODEL", help=(
        "The served model's name; with --backend llamacpp, the GGUF (a path or a name)."))] = None,
    backend: Annotated[str, typer.Option("--backend", metavar="NAME", help=(
        "openai (a server at --base-url) or llamacpp (the model in this process, concurrency 1)."))] = "openai",
    engine: Annotated[str | None, typer.Option("--engine", metavar="NAME", help=(
        f"With --backend llamacpp: the grammar engine (default {DEFAULT_LOCAL_ENGINE})."))] = None,
    threads: Annotated[int | None, typer.Option(
        "--threads", metavar="N", min=1, help="With --backend llamacpp: CPU threads.")] = None,
    concurrency: Annotated[list[str], typer.Option(
        "--concurrency", metavar="LEVELS", help="Requests in flight, e.g. 1,4,16 (default 1,4).")] = [],
    n: Annotated[int, typer.Option("-n", "--n", metavar="N", min=1, help="Prompts per batch.")] = 16,
    repeats: Annotated[int, typer.Option(
        "--repeats", metavar="R", min=1, help="Times each batch is measured (the ratios' spread).")] = 3,
    cache: Annotated[list[str], typer.Option(
        "--cache", metavar="STATE", help=f"Grammar cache states to measure: {join_names(CACHES)} "
        "(default both): warm = each schema as it is, sent once first; cold = each request's schema unique.")] = [],
    rate: Annotated[float | None, typer.Option(
        "--rate", metavar="R", min=0.001, help="Poisson arrivals at R requests/s (seeded); "
        "default: a closed loop at the concurrency.")] = None,
    prompts_file: Annotated[Path | None, typer.Option(
        "--prompts", metavar="FILE", help='JSONL of {"prompt", "schema"} (default: BFCL v3 simple items).')] = None,
    schemas: Annotated[Path | None, typer.Option(
        "--schemas", metavar="PATH", help="A JSON Schema corpus (a folder of *.json or a JSONL of schemas, "
        "JSONSchemaBench's layout): the first N usable schemas, and the keywords the grammar dropped.")] = None,
    dialect: Annotated[str | None, typer.Option(
        "--dialect", metavar="NAME", help=f"Structured-output dialect: {join_names([AUTO_DIALECT, *dialect_names()])} "
        "(default: found by the canary).")] = None,
    max_tokens: Annotated[int, typer.Option("--max-tokens", metavar="N", min=2, help="Token cap per answer.")] = 256,
    timeout: Annotated[float, typer.Option(
        "--timeout", metavar="SECONDS", min=0.1, help="Seconds a request may take in all, streaming included.")] = 120.0,
    seed: Annotated[int, typer.Option("--seed", metavar="INT", help="Sampling and arrival seed.")] = 0,
    fail_if: Annotated[list[str], typer.Option(
        "--fail-if", metavar="EXPR", help=f"Exit 1 if METRIC[GLOB] OP NUMBER holds for any comparison; metrics: "
        f"{', '.join(COST_METRICS)}; e.g. 'tpot_ratio > 1.2' or 'throughput_ratio[c16/cold] < 0.5'; "
        "exit 2 if a value it matches is n/a.")] = [],
    as_json: Annotated[bool, typer.Option("--json", help="Print a machine-readable summary on stdout.")] = False,
) -> None:
    """Measure what the server's structured decoding (or, with --backend
    llamacpp, the in-process grammar's) costs: the same prompts
    streamed with the grammar off and on (warm and cold grammar cache), at
    each concurrency level, timed per request (TTFT, TPOT), with every
    answer validated against its full schema. Rerunning the same command
    resumes from DIR's journal."""
    check_choice("--dialect", dialect, [AUTO_DIALECT, *dialect_names()])
    gates = [parse_cost_gate(text) for text in fail_if]
    n, repeats = capped(n), capped(repeats)  # CONFORMBENCH_TEST_SIZE (runner/test_size.py)
    config = CostConfig(levels=capped_levels(_levels(concurrency)), n=n, repeats=repeats,
                        caches=split_values(cache) or CACHES, rate=rate, seed=seed, max_tokens=max_tokens,
                        timeout_s=timeout)
    sender = _sender(backend, base_url, dialect, engine, threads, config)  # checked before any file is read
    prompts, source, excluded = _prompts(prompts_file, schemas, n)
    target = CostTarget(base_url, model, None if dialect == AUTO_DIALECT else dialect, source, excluded)
    _measure(sender(target), target, config, prompts, out, gates, as_json)


def _prompts(prompts_file: Path | None, schemas: Path | None,
             n: int) -> tuple[list[CostPrompt], str, tuple[ExcludedSchema, ...]]:
    if prompts_file is not None and schemas is not None:
        raise UsageError("--prompts and --schemas both name the prompts: give one")
    if schemas is not None:
        prompts, excluded = corpus_prompts(schemas, n)
        return prompts, f"corpus {schemas.name}", excluded
    if prompts_file is not None:
        return file_prompts(prompts_file, n), prompts_file.name, ()
    return bfcl_prompts(n), "bfcl-simple", ()


_Make = Callable[[CostTarget], CostSender]


def _sender(backend: str, base_url: str | None, dialect: str | None, engine: str | None, threads: int | None,
            config: CostConfig) -> _Make:
    """What makes the sender, once every option is checked (UsageError in one line)."""
    if backend == "openai":
        if base_url is None:
            raise UsageError("engines cost needs --base-url URL (a server), or --backend llamacpp --model GGUF")
        if engine is not None or threads is not None:
            raise UsageError("--engine and --threads are for --backend llamacpp: a server decodes with its own")
        return lambda target: cost_backend(target, config)  # reached and its grammar proved
    if base_url is not None or dialect is not None:
        raise UsageError(f"--base-url and --dialect are for a server; --backend {backend} runs the model here")
    local_engine = engine or DEFAULT_LOCAL_ENGINE
    check_local(backend, config, local_engine)

    def make(target: CostTarget) -> CostSender:
        if target.model is None:
            raise UsageError(f"--backend {backend} needs --model (a GGUF path or name)")
        return LlamaCppSender(target.model, local_engine, threads, n_ctx=4096)
    return make


def _measure(sender: CostSender, target: CostTarget, config: CostConfig, prompts: list[CostPrompt], out: Path,
             gates: list[Gate], as_json: bool) -> None:
    err = wide_console(stderr=True)
    with RunProgress(len(batch_plan(config)), unit="batch", quiet=as_json) as progress:
        report, paths = run_cost(sender, target, config, prompts, out, lambda key: progress.step(f"c{key[1]} {key[2]}", 1),
                                 lambda line: err.print(escape(line)))
    checks = check_cost_gates(gates, report)
    if as_json:
        typer.echo(json.dumps({**_summary(report, paths), "gates": [
            {"gate": c.gate.text, "label": c.label, "value": c.value, "tripped": c.tripped} for c in checks]}))
    else:
        wide_console().print(_table(report))
        err.print(escape(f"wrote {', '.join(str(p) for p in paths)}"))
    for check in checks:
        if check.tripped:
            err.print(escape(f"gate tripped: {check.describe()}"))
    if any(c.tripped for c in checks):
        raise typer.Exit(1)
