"""The ``engines`` group: ``list`` (also ``conformbench list engines``), ``probe`` and ``check``: the flags
become ``api.ProbeOptions`` and ``api.CheckOptions``, ``api.probe`` and ``api.check`` run them, and this
module prints their results."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from conformbench import api
from conformbench.audits.engine_check import EngineCheckReport
from conformbench.audits.engine_check.store import PARTIAL_NAME
from conformbench.audits.probe.cases import PROBE_CASES
from conformbench.backends.base import backends
from conformbench.cli.common import WithBackendOptions, join_names, names_of, run_flag, split_values
from conformbench.cli.engines.cost_command import cost
from conformbench.cli.engines.probe_table import probe_table
from conformbench.engines.base import engines
from conformbench.files import JSON_SCHEMA_TEST_SUITE
from conformbench.formats.base import output_formats
from conformbench.records.generation import BackendConfig, constraint_label
from conformbench.records.spec import SERVER_ENGINE
from conformbench.runner.progress import console as wide_console
from conformbench.scoring.percent import pct

__all__ = ["engine_statuses", "engines_app", "engines_table", "register"]

engines_app = typer.Typer(
    help="Constraint engines: which are installed, and which JSON Schema keywords each enforces.",
    no_args_is_help=True,
)


def engine_statuses() -> list[dict[str, str]]:
    """Every registered engine: installed (with version) or why not."""
    rows = []
    for name in engines.names():
        engine = engines.get(name)()
        missing = engine.availability()
        rows.append({"engine": name, "status": "installed" if missing is None else "unavailable",
                     "version": engine.version() or "-", "note": missing or ""})
    # not an in-process engine: the name --engine takes for a server's own structured decoding
    rows.append({"engine": SERVER_ENGINE, "status": "with --backend openai", "version": "-",
                 "note": "the server's own structured decoding (the default for HTTP backends); "
                         "its request shape (dialect) is found by the canary or set with --dialect"})
    return rows


def engines_table() -> Table:
    table = Table("engine", "status", "version", "note")
    for row in engine_statuses():
        table.add_row(*(escape(value) for value in row.values()))
    return table


@engines_app.command("list")
def list_engines() -> None:
    """Show every registered engine: installed (with version) or why not. The same as conformbench list
    engines."""
    wide_console().print(engines_table())


def probe(
    out: Annotated[Path, typer.Option("--out", metavar="DIR", help="Directory for engines.json and engines.md.")],
    engine: Annotated[list[str], typer.Option(
        "--engine", metavar="NAME",
        help=f"Engine to probe: {names_of(engines)} (repeatable; default all), or {SERVER_ENGINE} (the "
             "default with --backend openai: the server's own structured decoding).")] = [],
    keyword: Annotated[list[str], typer.Option(
        "--keyword", metavar="KEYWORD",
        help=f"Keyword to probe: {join_names(dict.fromkeys(c.keyword for c in PROBE_CASES))} "
             "(repeatable; default all).")] = [],
    n_per_keyword: Annotated[int, typer.Option(
        "--n-per-keyword", metavar="N", min=1, help="Nudged samples per keyword.")] = 2,
    model: Annotated[str | None, run_flag("model")] = None,
    backend_name: Annotated[str, run_flag("backend", backends=names_of(backends))] = "llamacpp",
    base_url: Annotated[str | None, typer.Option(
        "--base-url", metavar="URL", help="Server URL ending in /v1 (openai), e.g. http://127.0.0.1:8000/v1.")] = None,
    timeout: Annotated[float, run_flag("timeout_s")] = BackendConfig.timeout_s,
    threads: Annotated[int | None, run_flag("threads")] = None,
    max_tokens: Annotated[int, typer.Option(
        "--max-tokens", metavar="N", min=1, help="Token cap per sample.")] = 48,
    seed: Annotated[int, typer.Option("--seed", metavar="INT", help="Sampling seed.")] = 0,
    output_format: Annotated[list[str], typer.Option(
        "--output-format", metavar="NAME",
        help=f"Answer form the engines force: {names_of(output_formats)} (repeatable; default json). "
             "llguidance constrains yaml and xml with its grammars of our answer forms.")] = [],
    tools: Annotated[list[str], typer.Option("--tools", metavar="MODE", help="Probe tool arguments through the "
        "server's tools API in this mode instead: auto, required or named, ,strict after it (repeatable).")] = [],
    backend_options: dict[str, Any] | None = None,
) -> None:
    """Generate under each engine with prompts nudging the model to violate a
    keyword, validate against the full schema, and classify each keyword as
    enforced, ignored or refused, in each answer form asked for. With
    --backend openai the engine is the server's own structured decoding.
    The backend's own options (--dialect, --batched...) are its declared ones."""
    done = api.probe(api.ProbeOptions(
        out=out, engines=split_values(engine), keywords=split_values(keyword), n_per_keyword=n_per_keyword,
        model=model, backend=backend_name, base_url=base_url, timeout_s=timeout, threads=threads,
        max_tokens=max_tokens, seed=seed, output_formats=split_values(output_format), tool_modes=tuple(tools),
        backend_options=backend_options or {},
    ))
    report = done.report
    console = wide_console(stderr=True)
    table, legend = probe_table(report)
    wide_console().print(table)
    for line in legend:
        wide_console().print(line, soft_wrap=True, highlight=False)
    for probed in report.engines:
        if probed.canary == "failed":  # said here too: the table alone reads "inconclusive"
            label, detail = constraint_label(probed.engine, probed.output_format), probed.canary_detail or ""
            said = detail if detail.startswith(f"{label}: ") else f"{label}: {detail}"  # a tools canary names its mode
            console.print(escape(said), soft_wrap=True)
    console.print(escape(f"wrote {done.json_path} and {done.markdown_path}"))


def _summary_table(report: EngineCheckReport) -> Table:
    def ms(value: float | None) -> str:
        return "-" if value is None else f"{value:.3g}"

    table = Table()
    table.add_column("engine", no_wrap=True)
    for header in ("source", "coverage", "compliance", "over", "under", "compile p50/p95 ms", "mask p50/p99 ms"):
        table.add_column(header)
    for engine in report.engines:
        for s in engine.sources:
            table.add_row(
                engine.engine, s.source.replace(f"{JSON_SCHEMA_TEST_SUITE}/", "suite "), f"{s.compiled}/{s.schemas}",
                "-" if s.compliance is None else pct(s.compliance),
                str(s.over), str(s.under), f"{ms(s.compile.p50_ms)} / {ms(s.compile.p95_ms)}",
                f"{ms(s.mask.p50_ms)} / {ms(s.mask.p99_ms)}",
            )
    return table


@engines_app.command("check")
def check(
    out: Annotated[Path, typer.Option("--out", metavar="DIR", help="Directory for engines-check.json, .md and .html.")],
    engine_names: Annotated[list[str], typer.Option(
        "--engine", metavar="NAME",
        help=f"Engine to check: {names_of(engines)} (repeatable or comma-separated; default all).")] = [],
    suites: Annotated[list[str], typer.Option(
        "--suite", metavar="NAME", help="Schema set: json-schema-test-suite, generated, or one shipped in "
        "data/suites/ (repeatable; default: json-schema-test-suite and generated, unless --schemas is given).")] = [],
    schemas: Annotated[list[Path], typer.Option(
        "--schemas", metavar="PATH", help="Real schemas: a directory of *.json or a JSONL file; or a directory "
        "of MaskBench-shaped files ({schema, meta, tests: [{data, valid}]}), each test judged against its "
        "verdict (repeatable).")] = [],
    drafts: Annotated[list[str], typer.Option(
        "--draft", metavar="NAME", help="Test-suite draft (2020-12, 7; repeatable); named drafts run on every "
        "engine. Default: 2020-12 plus drafts an engine claims, run on the engines claiming them.")] = [],
    n: Annotated[int, typer.Option("--n", "-n", metavar="N", min=1, help="Schemas of the generated set.")] = 602,
    limit: Annotated[int | None, typer.Option(
        "--limit", metavar="N", min=1, help="Only the first N schemas of each set.")] = None,
    serialisations: Annotated[list[str], typer.Option(
        "--serialisation", metavar="NAME",
        help="How documents are written: compact (default), spaced (repeatable; several: each must agree).")] = [],
    mask_positions: Annotated[int, typer.Option(
        "--mask-positions", metavar="N", min=0, help="Positions per schema where the full token mask is timed.")] = 4,
    compile_timeout: Annotated[float, typer.Option(
        "--compile-timeout", metavar="SECONDS", min=0.1,
        help="Seconds before a compile that can be stopped (outlines) is refused.")] = 10.0,
    model: Annotated[str | None, typer.Option(
        "--model", metavar="MODEL", help="The model whose tokenizer to use, as its backend reads it without "
        "weights (llamacpp: a GGUF path or alias; default: the embedded SmolLM2).")] = None,
    backend_name: Annotated[str, run_flag("backend", backends=names_of(backends))] = "llamacpp",
    probe_file: Annotated[Path | None, typer.Option(
        "--probe", metavar="FILE",
        help="engines.json of an `engines probe` run: its verdicts join each engine's keyword matrix.")] = None,
    fresh: Annotated[bool, typer.Option(
        "--fresh", help=f"Check every schema again instead of resuming from DIR/{PARTIAL_NAME}.")] = False,
) -> None:
    """Walk documents known to be valid or invalid through each engine's
    grammar with the model's tokenizer (no model weights, no decoding): which
    valid documents it rejects (over-constrained), which invalid ones it
    accepts (under-constrained), which schemas it refuses, and what compiles
    and per-token masks cost. Each schema's outcome is kept in DIR as it is
    made: an interrupted check resumes, and adding an engine checks only it."""
    done = api.check(api.CheckOptions(
        out=out, engines=split_values(engine_names), suites=split_values(suites), schemas=tuple(schemas),
        drafts=split_values(drafts), n=n, limit=limit, serialisations=split_values(serialisations),
        mask_positions=mask_positions, compile_timeout_s=compile_timeout, model=model, backend=backend_name,
        probe_file=probe_file, fresh=fresh,
    ))
    report = done.report
    wide_console().print(_summary_table(report))
    wide_console(stderr=True).print(escape(f"wrote {', '.join(str(p) for p in done.files)} in {report.seconds:.1f} s"))


engines_app.command("probe")(WithBackendOptions(probe))
engines_app.command("cost")(cost)


def register(app: typer.Typer) -> None:
    app.add_typer(engines_app, name="engines")
