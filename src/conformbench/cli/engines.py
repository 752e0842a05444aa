"""``conformbench engines list`` (also ``conformbench list engines``), ``probe`` and ``check``."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, closing
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from conformbench.audits.engine_check import (
    CheckConfig,
    CheckSource,
    EngineCheckReport,
    attach_probe,
    check_steps,
    left_out,
    run_engine_check,
    suite_sources,
)
from conformbench.audits.engine_check.maskbench import read_schemas_source
from conformbench.audits.engine_check.store import PARTIAL_NAME, OutcomeStore, StoreSettings
from conformbench.audits.probe import (
    ProbeConfig,
    ProbeReport,
    probe_steps,
    run_probe,
    write_probe,
)
from conformbench.audits.probe.cases import PROBE_CASES
from conformbench.audits.probe.markdown import verdict_cell
from conformbench.backends.backend_options import check_backend_options
from conformbench.backends.base import (
    Backend,
    ReachesServer,
    backends,
    constraint_side,
    default_engine,
    engine_mismatch,
    manifest_of,
)
from conformbench.cli._engines_cost import cost
from conformbench.cli.common import WithBackendOptions, join_names, names_of, run_flag, split_values
from conformbench.engines.base import Vocabulary, engines
from conformbench.errors import UsageError
from conformbench.files import JSON_SCHEMA_TEST_SUITE, read_text_file
from conformbench.formats.base import output_formats
from conformbench.records.generation import BackendConfig, constraint_label
from conformbench.records.spec import SERVER_ENGINE
from conformbench.reports.engine_check import write_engine_check
from conformbench.runner.progress import RunProgress
from conformbench.runner.progress import console as wide_console
from conformbench.runner.test_size import capped, test_size
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
    extra = check_backend_options(backend_name, backend_options or {}, lambda option: option.cli_flag)
    names = _probe_engines(backend_name, split_values(engine), base_url)
    config = ProbeConfig(
        engines=names,
        keywords=split_values(keyword) or _first_keywords(test_size()),
        n_per_keyword=capped(n_per_keyword),
        max_tokens=max_tokens,
        seed=seed,
        output_formats=split_values(output_format) or ("json",),
        tool_modes=tuple(tools),
    )
    total = probe_steps(config)  # validates names before the model loads
    report = _probe_with(_probe_backend(backend_name, model, threads, base_url, extra, timeout), config, total, out)
    console = wide_console(stderr=True)
    json_path, md_path = write_probe(report, out)
    wide_console().print(_probe_table(report))
    for line in PROBE_LEGEND:
        wide_console().print(line, soft_wrap=True, highlight=False)
    for probed in report.engines:
        if probed.canary == "failed":  # said here too: the table alone reads "inconclusive"
            console.print(escape(f"{constraint_label(probed.engine, probed.output_format)}: "
                                 f"{probed.canary_detail}"), soft_wrap=True)
    console.print(escape(f"wrote {json_path} and {md_path}"))


def _first_keywords(size: int | None) -> tuple[str, ...]:
    """All keywords (an empty choice), or under ``CONFORMBENCH_TEST_SIZE`` the first ``size`` of them."""
    return () if size is None else tuple(dict.fromkeys(c.keyword for c in PROBE_CASES))[:size]


def _probe_with(backend: Backend, config: ProbeConfig, total: int, out: Path) -> ProbeReport:
    try:
        with RunProgress(total, unit="samples") as progress:
            return run_probe(backend, config, progress.step, out)
    finally:
        backend.close()


def _probe_table(report: ProbeReport) -> Table:
    """A row per keyword, a column per engine (as engines.md): twenty keyword
    columns cannot fit a terminal, a log's 80 columns least of all."""
    summary = Table("keyword", *(constraint_label(p.engine, p.output_format) for p in report.engines))
    verdicts = [{k.keyword: verdict_cell(k) for k in p.keywords} for p in report.engines]
    for name in dict.fromkeys(k.keyword for p in report.engines for k in p.keywords):
        summary.add_row(name, *(by_keyword.get(name, "-") for by_keyword in verdicts))
    return summary


#: printed under the terminal table (engines.md has its own), a line per verdict so
#: that it fits a log's 80 columns as the table does
PROBE_LEGEND = (
    "enforced (k/n held): none of the n judged outputs broke the keyword",
    "  (evidence on n attempts, not proof)",
    "ignored (k/n broke): k outputs broke it and the engine let them through",
    "refused: the engine would not compile the schema",
    "inconclusive: no output could be judged (cut, unparsable, an error)",
    "  or the canary failed",
    "unavailable: the engine is not installed",
    "not enforced (server): the server dropped the keyword",
    "Each sample is in engines.json.",
)


def _probe_engines(backend: str, asked: tuple[str, ...], base_url: str | None) -> tuple[str, ...]:
    """The engines to probe on ``backend`` (its default when none is asked
    for); UsageError for an engine or option the backend does not take."""
    server = constraint_side(backend) == "server"
    if not server and base_url is not None:
        takers = " or ".join(f"--backend {b}" for b in backends.names() if constraint_side(b) == "server")
        raise UsageError(f"--base-url is for a server ({takers}), not {backend}")
    if server and base_url is None:
        raise UsageError(f"--backend {backend} needs --base-url (e.g. http://127.0.0.1:8000/v1)")
    # a server's own decoding, or a backend's own engines (vllm's: each reloads vLLM, so its default alone)
    names = asked or ((default_engine(backend),) if server or manifest_of(backend).own_engines else ())
    for name in names:
        mismatch = engine_mismatch(backend, name)
        if mismatch is not None:
            raise UsageError(mismatch)
    return names


def _probe_backend(name: str, model: str | None, threads: int | None, base_url: str | None,
                   extra: dict[str, Any], timeout: float) -> Backend:
    """``name`` with the probe's settings and its own options (``extra``)."""
    if constraint_side(name) != "server":
        return backends.get(name)(BackendConfig(model=model, threads=threads, n_ctx=2048, extra=extra))
    # one request at a time: the probe asks greedy questions one after another
    backend = backends.get(name)(BackendConfig(model=model, base_url=base_url, concurrency=1, timeout_s=timeout,
                                               max_retries=2, extra=extra))
    if isinstance(backend, ReachesServer):  # a dead URL: one line before any progress display
        backend.check_reachable()
    return backend


def _drafts(asked: tuple[str, ...], names: tuple[str, ...]) -> tuple[str, ...]:
    """The suite drafts to load: those asked for, else 2020-12 and every
    draft a selected engine claims."""
    if asked:
        return asked
    selected = names or tuple(engines.names())
    claimed = {d for n in selected for d in engines.get(n)().json_schema_drafts}
    return ("2020-12", *sorted(claimed - {"2020-12"}))


def _sources(suites: tuple[str, ...], schemas: list[Path], drafts: tuple[str, ...], n: int,
             limit: int | None) -> list[CheckSource]:
    if not suites and not schemas:
        suites = (JSON_SCHEMA_TEST_SUITE, "generated")
    sources = [source for name in suites for source in suite_sources(name, drafts, n, limit)]
    return sources + [read_schemas_source(path, limit=limit) for path in schemas]


def _read_probe(path: Path) -> ProbeReport:
    try:
        return ProbeReport.model_validate_json(read_text_file(path, "probe file"))
    except ValueError as exc:
        first = str(exc).splitlines()[0]
        raise UsageError(f"{path} is not an engines.json written by `engines probe`: {first}") from None


def _store(out: Path, vocab: Vocabulary, config: CheckConfig, fresh: bool, console: Console) -> OutcomeStore:
    if fresh and (out / PARTIAL_NAME).exists():
        (out / PARTIAL_NAME).unlink()
    settings = StoreSettings(tokenizer=Path(vocab.key).name, n_vocab=vocab.n_vocab,
                             serialisations=list(config.serialisations), mask_positions=config.mask_positions,
                             compile_timeout_s=config.compile_timeout_s)
    store = OutcomeStore(out, settings)
    if store.moved_aside is not None:
        console.print(escape(f"{PARTIAL_NAME} in {out} was made with other settings: moved to "
                             f"{store.moved_aside.name}, every schema is checked again"))
    elif len(store):
        console.print(escape(f"resuming: {len(store)} schema outcomes kept in {store.path}"))
    return store


def _say_left_out(config: CheckConfig, console: Console) -> None:
    skipped = left_out(config)
    kept = [n for n in engines.names() if n not in skipped and engines.get(n)().availability() is None]
    for name, why in skipped.items():
        console.print(escape(f"{name} is left out of the default check: {why}; add it with "
                             f"--engine {','.join([*kept, name])}"), soft_wrap=True)


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
    names = _engines_for(backend_name, split_values(engine_names))
    n, limit = _test_sized(n, limit)
    config = CheckConfig(
        engines=names, serialisations=split_values(serialisations) or ("compact",), mask_positions=mask_positions,
        compile_timeout_s=compile_timeout, all_drafts=bool(drafts), limit=limit,
    )
    sources = _sources(split_values(suites), schemas, _drafts(split_values(drafts), names), n, limit)
    probe_report = _read_probe(probe_file) if probe_file is not None else None
    total = check_steps(sources, config)  # validates engine names before the tokenizer loads
    console = wide_console(stderr=True)
    _say_left_out(config, console)
    with _vocabulary_reader(backend_name)(model) as vocab:
        report = _check_with_tokenizer(vocab, out, sources, config, fresh, total, console)
    if probe_report is not None and probe_file is not None:
        report = attach_probe(report, probe_report, probe_file.name)
    paths = write_engine_check(report, out)
    wide_console().print(_summary_table(report))
    console.print(escape(f"wrote {', '.join(str(p) for p in paths)} in {report.seconds:.1f} s"))


def _test_sized(n: int, limit: int | None) -> tuple[int, int | None]:
    """``n`` and ``limit``, under ``CONFORMBENCH_TEST_SIZE`` the first N schemas of each set."""
    return (capped(n), capped(limit or n)) if test_size() is not None else (n, limit)


def _engines_for(backend: str, named: tuple[str, ...]) -> tuple[str, ...]:
    """The engines named (one the backend's manifest refuses: a UsageError),
    or with none named, when the backend refuses some (transformers: gbnf),
    the default check's without them."""
    refused = manifest_of(backend).refused_engines
    for name in named:
        if name in refused:
            raise UsageError(f"--engine {name} cannot run with --backend {backend}: {refused[name]}")
    if named or not refused:
        return named
    skipped = left_out(CheckConfig())
    return tuple(n for n in engines.names() if n not in skipped and n not in refused)


def _vocabulary_reader(backend: str) -> Callable[[str | None], AbstractContextManager[Vocabulary]]:
    """How ``backend`` reads a model's tokenizer without its weights, as its
    manifest declares (UsageError naming the backends that can)."""
    read = manifest_of(backend).vocabulary
    if read is None:
        takers = " or ".join(f"--backend {b}" for b in backends.names() if manifest_of(b).vocabulary is not None)
        raise UsageError(f"the {backend} backend cannot read a tokenizer without its model: use {takers}")
    return read


def _check_with_tokenizer(vocab: Vocabulary, out: Path, sources: list[CheckSource], config: CheckConfig,
                          fresh: bool, total: int, console: Console) -> EngineCheckReport:
    """The check itself, resumed from DIR's store, with the model's tokenizer."""
    with closing(_store(out, vocab, config, fresh, console)) as store, \
            RunProgress(total, unit="schemas × engines") as progress:
        return run_engine_check(vocab, sources, config, progress.step, store)


engines_app.command("probe")(WithBackendOptions(probe))
engines_app.command("cost")(cost)


def register(app: typer.Typer) -> None:
    app.add_typer(engines_app, name="engines")
