"""``conformbench dataset build|stats|export``: make the schema dataset
(generated, or from external schemas), show its keyword mix and token
lengths, and write it in the Hugging Face Hub's layout."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from conformbench.backends.llamacpp.vocabulary import gguf_tokenizer
from conformbench.cli.common import names_of, split_values
from conformbench.errors import UsageError
from conformbench.files import read_text_file
from conformbench.formats.base import PAPER_SCHEMA_FORMATS, schema_formats
from conformbench.registry import did_you_mean
from conformbench.runner.progress import RunProgress
from conformbench.runner.progress import console as wide_console
from conformbench.runner.test_size import capped, test_size
from conformbench.schemas.build import DEFAULT_N, BuildOptions, build_dataset, build_size, prepare_output
from conformbench.schemas.case import load_dataset
from conformbench.schemas.config import load_config
from conformbench.schemas.dataset_stats import (
    DatasetStats,
    dataset_stats,
    token_stats,
)
from conformbench.schemas.external import suite_path

__all__ = ["build", "export", "register", "stats"]

dataset_app = typer.Typer(
    help="Build and inspect schema datasets (ConCodeEval's 602 schemas, or your own).",
    no_args_is_help=True,
)


@dataset_app.command("build")
def build(
    out: Annotated[Path, typer.Option("--out", metavar="DIR", help="Output directory.")],
    n: Annotated[int | None, typer.Option(
        "--n", "-n", metavar="N", min=1,  # refused by the parser, before any progress bar
        help="Schemas to generate (default 602); with --schemas, the first N.")] = None,
    seed: Annotated[int, typer.Option("--seed", metavar="INT", help="Generator seed.")] = 0,
    config: Annotated[Path | None, typer.Option(
        "--config", metavar="FILE", help="Generator preferences (TOML or JSON); unknown keys are rejected.")] = None,
    schemas: Annotated[Path | None, typer.Option(
        "--schemas", metavar="PATH", help="External schemas: a directory of *.json or a JSONL file.")] = None,
    suite: Annotated[str | None, typer.Option(
        "--suite", metavar="NAME", help="A shipped suite of real-world schemas instead of the generator "
                                        "(e.g. schemastore; see docs/dataset.md).")] = None,
    schema_format: Annotated[list[str], typer.Option(
        "--schema-format", metavar="NAME",
        help=f"Schema format to render: {names_of(schema_formats)} (repeatable; default all; a schema "
             "that one of them cannot express keeps the others, and its record says why that one is "
             "missing).")] = [],
) -> None:
    """Write DIR/dataset.jsonl (schemas, renderings, oracle instances),
    DIR/stats.json and DIR/excluded.json."""
    if schemas is not None and suite is not None:
        raise UsageError("--schemas and --suite both name the schemas; give one")
    if suite is not None:
        schemas = suite_path(suite)
    if schemas is not None and config is not None:
        raise UsageError("--config applies to generated schemas; drop it with --schemas or --suite")
    if test_size() is not None:  # CONFORMBENCH_TEST_SIZE (runner/test_size.py): at most that many schemas
        n = capped(n if n is not None else DEFAULT_N)
    options = BuildOptions(out=out, n=n, seed=seed, config=load_config(config), schemas=schemas,
                           formats=_format_names(split_values(schema_format) or PAPER_SCHEMA_FORMATS))
    prepare_output(options)  # a bad --out is one line, before any progress display
    with RunProgress(build_size(options), unit="schemas") as progress:
        result = build_dataset(dataclasses.replace(options, tick=progress.step, stage=progress.stage))
    for item in result.excluded:
        typer.echo(f"excluded {item.id} ({item.source}): {item.reason}", err=True)
    missing = result.stats.missing_formats
    typer.echo(
        f"wrote {len(result.cases)} schemas to {out / 'dataset.jsonl'}"
        f" ({len(result.excluded)} excluded, listed in {out / 'excluded.json'})"
        + ("; without a rendering: " + ", ".join(f"{fmt} {k}" for fmt, k in missing.items()) if missing else "")
    )


def _format_names(given: tuple[str, ...]) -> tuple[str, ...]:
    names = tuple(dict.fromkeys(given))
    for name in names:
        schema_formats.get(name)  # unknown name: did-you-mean, exit 2
    return names


def _excluded_count(directory: Path) -> int:
    path = directory / "excluded.json"
    try:
        return len(json.loads(read_text_file(path, "excluded list")))
    except (UsageError, ValueError, TypeError):
        return 0


def _table(title: str, header: str, counts: dict[str, int], n: int) -> Table:
    table = Table(title=title)
    table.add_column(header)
    table.add_column("schemas", justify="right")
    table.add_column("share", justify="right")
    for name, count in counts.items():
        table.add_row(name, str(count), f"{100 * count / max(n, 1):.1f}%")
    return table


def _print_stats(console: Console, found: DatasetStats) -> None:
    console.print(f"{found.n} schemas, {found.excluded} excluded, "
                  f"{sum(found.invalid_instances.values())} single-keyword invalid instances, "
                  f"{found.unisolated} constraints without one")
    console.print(_table("Keyword mix", "keyword", found.keywords, found.n))
    console.print(_table("Root types", "root type", found.root_types, found.n))
    console.print(_table("Nesting depth", "depth", found.depths, found.n))
    if found.missing_formats:
        console.print(_table("Schemas without a rendering", "schema format", found.missing_formats, found.n))


@dataset_app.command("stats")
def stats(
    directory: Annotated[Path, typer.Argument(metavar="DIR", help="A dataset directory (or its dataset.jsonl).")],
    tokens: Annotated[bool, typer.Option(
        "--tokens", help="Also max and mean schema tokens per format (the paper's Table 5).")] = False,
    tokenizer: Annotated[Path | None, typer.Option(
        "--tokenizer", metavar="GGUF", help="GGUF file whose tokenizer counts tokens (default: embedded SmolLM2).")] = None,
) -> None:
    """Print the keyword mix (schemas per keyword, root type, depth) and,
    with --tokens, schema lengths in a model's tokens."""
    cases = load_dataset(directory)
    root = directory if directory.is_dir() else directory.parent
    console = wide_console()
    _print_stats(console, dataset_stats(cases, excluded=_excluded_count(root)))
    if tokens or tokenizer is not None:
        table = Table(title="Schema tokens per format")
        for column in ("format", "max tokens", "mean tokens"):
            table.add_column(column, justify="left" if column == "format" else "right")
        for row in token_stats(cases, gguf_tokenizer(tokenizer)):
            table.add_row(row.schema_format, str(row.max_tokens), f"{row.mean_tokens:.2f}")
        console.print(table)


@dataset_app.command("export")
def export(
    directory: Annotated[Path, typer.Argument(metavar="DIR", help="A dataset directory (or its dataset.jsonl).")],
    out: Annotated[Path, typer.Option("--out", metavar="OUT", help="Output directory.")],
    to: Annotated[str, typer.Option("--to", metavar="LAYOUT", help="Layout to write: hf (the Hugging Face Hub's).")],
) -> None:
    """Write the dataset in another layout: --to hf writes parquet configs
    `schemas` and `validation` and a dataset card (datasets.load_dataset(OUT,
    "schemas", split="test") reads it offline)."""
    from conformbench.exporters.hf_dataset import export_hf

    if to != "hf":
        raise UsageError(f"unknown export layout {to!r}{did_you_mean(to, ['hf'])}; known: hf")
    done = export_hf(directory, out)
    typer.echo(f"wrote {done.schemas} schemas and {done.validation_items} validation items to {done.out} "
               f"({', '.join(str(p.relative_to(done.out)) for p in done.files)})")


def register(app: typer.Typer) -> None:
    app.add_typer(dataset_app, name="dataset")
