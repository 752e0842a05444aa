"""``conformbench engines list`` and ``conformbench engines probe``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from conformbench.checks.probe import ProbeConfig, probe_steps, run_probe, write_probe
from conformbench.engines.base import engines
from conformbench.models.base import backends
from conformbench.records.generation import BackendConfig

__all__ = ["engines_app", "register"]

engines_app = typer.Typer(
    help="Constraint engines: which are installed, and which JSON Schema keywords each enforces.",
    no_args_is_help=True,
)


def _split(values: list[str]) -> tuple[str, ...]:
    """Repeated options and comma-separated lists alike."""
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


@engines_app.command("list")
def list_engines() -> None:
    """Show every registered engine: installed (with version) or why not."""
    table = Table("engine", "status", "version", "note")
    for name in engines.names():
        engine = engines.get(name)()
        missing = engine.availability()
        status = "installed" if missing is None else "unavailable"
        table.add_row(name, status, engine.version() or "-", escape(missing or ""))
    Console().print(table)


@engines_app.command("probe")
def probe(
    out: Annotated[Path, typer.Option("--out", help="Directory for engines.json and engines.md.")],
    engine_names: Annotated[
        list[str], typer.Option("--engines", help="Engines to probe (comma-separated or repeated; default all).")
    ] = [],
    keywords: Annotated[
        list[str], typer.Option("--keywords", help="Keywords to probe (default all with a probe).")
    ] = [],
    n_per_keyword: Annotated[int, typer.Option("--n-per-keyword", min=1, help="Nudged samples per keyword.")] = 2,
    model: Annotated[str | None, typer.Option("--model", help="GGUF path or alias (default: embedded SmolLM2).")] = None,
    threads: Annotated[int | None, typer.Option("--threads", min=1)] = None,
    max_tokens: Annotated[int, typer.Option("--max-tokens", min=1)] = 48,
    seed: Annotated[int, typer.Option("--seed")] = 0,
) -> None:
    """Generate under each engine with prompts nudging the model to violate a
    keyword, validate against the full schema, and classify each keyword as
    enforced, ignored or refused."""
    config = ProbeConfig(
        engines=_split(engine_names),
        keywords=_split(keywords),
        n_per_keyword=n_per_keyword,
        max_tokens=max_tokens,
        seed=seed,
    )
    total = probe_steps(config)  # validates names before the model loads
    backend = backends.get("llamacpp")(BackendConfig(model=model, threads=threads, n_ctx=2048))
    console = Console(stderr=True)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    try:
        with Progress(*columns, console=console) as progress:
            task = progress.add_task("probing", total=total)

            def tick(label: str, steps: int) -> None:
                progress.update(task, advance=steps, description=label)

            report = run_probe(backend, config, tick)
    finally:
        backend.close()
    json_path, md_path = write_probe(report, out)
    summary = Table("engine", *report.settings["keywords"])
    for probed in report.engines:
        summary.add_row(probed.engine, *(k.status for k in probed.keywords))
    Console().print(summary)
    console.print(escape(f"wrote {json_path} and {md_path}"))


def register(app: typer.Typer) -> None:
    app.add_typer(engines_app, name="engines")
