"""What ``engines probe`` and ``engines check`` do, as library functions:

    from conformbench import api
    done = api.probe(api.ProbeOptions(out=Path("probe"), engines=("xgrammar",), keywords=("minimum",)))
    done.report.engines[0].keywords    # a verdict per keyword (engines.json's content)
    checked = api.check(api.CheckOptions(out=Path("check"), engines=("llguidance",), limit=10))
    checked.files                      # engines-check.json, .md and .html

Each takes one options record (the command's flags, one field each) and
returns what it wrote. The progress bar and the notes (a resumed check, an
engine left out of the default) go to stderr, as the commands show them.
The audits, backends and engines are imported when a function runs, so that
``conformbench.api`` stays light to import (tests/test_lazy_imports.py).
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformbench.errors import UsageError

if typing.TYPE_CHECKING:
    from rich.console import Console

    from conformbench.audits.engine_check import CheckConfig, CheckSource, EngineCheckReport
    from conformbench.audits.engine_check.store import OutcomeStore
    from conformbench.audits.probe import ProbeConfig, ProbeReport
    from conformbench.backends.base import Backend
    from conformbench.engines.base import Vocabulary

__all__ = ["CheckOptions", "CheckResult", "ProbeOptions", "ProbeResult", "check", "probe"]

#: the timeout of a probe's server requests: BackendConfig's default (held
#: to it by tests/api/test_engine_commands.py; not imported, to keep this light)
_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class ProbeOptions:
    """The flags of ``engines probe``, one field each (``()``: the command's
    default). ``backend_options``: the backend's own (``--dialect``...), by
    keyword."""

    out: Path
    engines: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    n_per_keyword: int = 2
    model: str | None = None
    backend: str = "llamacpp"
    base_url: str | None = None
    timeout_s: float = _TIMEOUT_S
    threads: int | None = None
    max_tokens: int = 48
    seed: int = 0
    output_formats: tuple[str, ...] = ()
    tool_modes: tuple[str, ...] = ()
    backend_options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ProbeResult:
    """A probe's report and the files it wrote (engines.json, engines.md)."""

    report: ProbeReport
    json_path: Path
    markdown_path: Path


def probe(options: ProbeOptions) -> ProbeResult:
    """Generate under each engine with prompts nudging the model to violate
    a keyword, validate against the full schema, classify each keyword, and
    write engines.json and engines.md into ``options.out``. Names are checked
    (UsageError) before the model loads."""
    from conformbench.audits.probe import ProbeConfig, probe_steps, write_probe
    from conformbench.backends.backend_options import check_backend_options
    from conformbench.runner.test_size import capped, test_size

    _positive("n_per_keyword", options.n_per_keyword)
    _positive("max_tokens", options.max_tokens)
    extra = check_backend_options(options.backend, dict(options.backend_options), lambda option: option.cli_flag)
    names = _probe_engines(options.backend, options.engines, options.base_url)
    config = ProbeConfig(
        engines=names,
        keywords=options.keywords or _first_keywords(test_size()),
        n_per_keyword=capped(options.n_per_keyword),
        max_tokens=options.max_tokens,
        seed=options.seed,
        output_formats=options.output_formats or ("json",),
        tool_modes=options.tool_modes,
    )
    total = probe_steps(config)  # validates names before the model loads
    backend = _probe_backend(options, extra)
    report = _probe_with(backend, config, total, options.out)
    json_path, md_path = write_probe(report, options.out)
    return ProbeResult(report, json_path, md_path)


def _positive(name: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UsageError(f"{name}: expected a whole number of at least 1, not {value!r}")


def _first_keywords(size: int | None) -> tuple[str, ...]:
    """All keywords (an empty choice), or under ``CONFORMBENCH_TEST_SIZE`` the first ``size`` of them."""
    from conformbench.audits.probe.cases import PROBE_CASES

    return () if size is None else tuple(dict.fromkeys(c.keyword for c in PROBE_CASES))[:size]


def _probe_with(backend: Backend, config: ProbeConfig, total: int, out: Path) -> ProbeReport:
    from conformbench.audits.probe import run_probe
    from conformbench.runner.progress import RunProgress

    try:
        with RunProgress(total, unit="samples") as progress:
            return run_probe(backend, config, progress.step, out)
    finally:
        backend.close()


def _probe_engines(backend: str, asked: tuple[str, ...], base_url: str | None) -> tuple[str, ...]:
    """The engines to probe on ``backend`` (its default when none is asked
    for); UsageError for an engine or option the backend does not take."""
    from conformbench.backends.base import backends, constraint_side, default_engine, engine_mismatch, manifest_of

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


def _probe_backend(options: ProbeOptions, extra: dict[str, Any]) -> Backend:
    """The backend with the probe's settings and its own options (``extra``)."""
    from conformbench.backends.base import ReachesServer, backends, constraint_side
    from conformbench.records.generation import BackendConfig

    name = options.backend
    if constraint_side(name) != "server":
        return backends.get(name)(BackendConfig(model=options.model, threads=options.threads, n_ctx=2048,
                                                extra=extra))
    # one request at a time: the probe asks greedy questions one after another
    backend = backends.get(name)(BackendConfig(model=options.model, base_url=options.base_url, concurrency=1,
                                               timeout_s=options.timeout_s, max_retries=2, extra=extra))
    if isinstance(backend, ReachesServer):  # a dead URL: one line before any progress display
        backend.check_reachable()
    return backend


# ------------------------------------------------------------------ engines check


@dataclass(frozen=True)
class CheckOptions:
    """The flags of ``engines check``, one field each (``()``: the command's
    default). ``probe_file``: an ``engines probe`` run's engines.json."""

    out: Path
    engines: tuple[str, ...] = ()
    suites: tuple[str, ...] = ()
    schemas: tuple[Path, ...] = ()
    drafts: tuple[str, ...] = ()
    n: int = 602
    limit: int | None = None
    serialisations: tuple[str, ...] = ()
    mask_positions: int = 4
    compile_timeout_s: float = 10.0
    model: str | None = None
    backend: str = "llamacpp"
    probe_file: Path | None = None
    fresh: bool = False


@dataclass(frozen=True)
class CheckResult:
    """A check's report and the files it wrote (engines-check.json, .md, .html)."""

    report: EngineCheckReport
    files: tuple[Path, ...]


def check(options: CheckOptions) -> CheckResult:
    """Walk documents known to be valid or invalid through each engine's
    grammar with the model's tokenizer (no weights, no decoding) and write
    the report into ``options.out``, resuming from the outcomes kept there
    (all checked again with ``fresh``)."""
    from conformbench.audits.engine_check import CheckConfig, attach_probe, check_steps
    from conformbench.reports.engine_check import write_engine_check
    from conformbench.runner.progress import console as wide_console

    _positive("n", options.n)
    names = _engines_for(options.backend, options.engines)
    n, limit = _test_sized(options.n, options.limit)
    config = CheckConfig(
        engines=names, serialisations=options.serialisations or ("compact",), mask_positions=options.mask_positions,
        compile_timeout_s=options.compile_timeout_s, all_drafts=bool(options.drafts), limit=limit,
    )
    sources = _sources(options.suites, list(options.schemas), _drafts(options.drafts, names), n, limit)
    probe_report = _read_probe(options.probe_file) if options.probe_file is not None else None
    total = check_steps(sources, config)  # validates engine names before the tokenizer loads
    console = wide_console(stderr=True)
    _say_left_out(config, console)
    with _vocabulary_reader(options.backend)(options.model) as vocab:
        report = _check_with_tokenizer(vocab, options, sources, config, total, console)
    if probe_report is not None and options.probe_file is not None:
        report = attach_probe(report, probe_report, options.probe_file.name)
    return CheckResult(report, tuple(write_engine_check(report, options.out)))


def _test_sized(n: int, limit: int | None) -> tuple[int, int | None]:
    """``n`` and ``limit``, under ``CONFORMBENCH_TEST_SIZE`` the first N schemas of each set."""
    from conformbench.runner.test_size import capped, test_size

    return (capped(n), capped(limit or n)) if test_size() is not None else (n, limit)


def _engines_for(backend: str, named: tuple[str, ...]) -> tuple[str, ...]:
    """The engines named (one the backend's manifest refuses: a UsageError),
    or with none named, when the backend refuses some (transformers: gbnf),
    the default check's without them."""
    from conformbench.audits.engine_check import CheckConfig, left_out
    from conformbench.backends.base import manifest_of
    from conformbench.engines.base import engines

    refused = manifest_of(backend).refused_engines
    for name in named:
        if name in refused:
            raise UsageError(f"--engine {name} cannot run with --backend {backend}: {refused[name]}")
    if named or not refused:
        return named
    skipped = left_out(CheckConfig())
    return tuple(n for n in engines.names() if n not in skipped and n not in refused)


def _drafts(asked: tuple[str, ...], names: tuple[str, ...]) -> tuple[str, ...]:
    """The suite drafts to load: those asked for, else 2020-12 and every
    draft a selected engine claims."""
    from conformbench.engines.base import engines

    if asked:
        return asked
    selected = names or tuple(engines.names())
    claimed = {d for n in selected for d in engines.get(n)().json_schema_drafts}
    return ("2020-12", *sorted(claimed - {"2020-12"}))


def _sources(suites: tuple[str, ...], schemas: list[Path], drafts: tuple[str, ...], n: int,
             limit: int | None) -> list[CheckSource]:
    from conformbench.audits.engine_check import suite_sources
    from conformbench.audits.engine_check.maskbench import read_schemas_source
    from conformbench.files import JSON_SCHEMA_TEST_SUITE

    if not suites and not schemas:
        suites = (JSON_SCHEMA_TEST_SUITE, "generated")
    sources = [source for name in suites for source in suite_sources(name, drafts, n, limit)]
    return sources + [read_schemas_source(path, limit=limit) for path in schemas]


def _read_probe(path: Path) -> ProbeReport:
    from conformbench.audits.probe import ProbeReport
    from conformbench.files import read_text_file

    try:
        return ProbeReport.model_validate_json(read_text_file(path, "probe file"))
    except ValueError as exc:
        first = str(exc).splitlines()[0]
        raise UsageError(f"{path} is not an engines.json written by `engines probe`: {first}") from None


def _say_left_out(config: CheckConfig, console: Console) -> None:
    from rich.markup import escape

    from conformbench.audits.engine_check import left_out
    from conformbench.engines.base import engines

    skipped = left_out(config)
    kept = [n for n in engines.names() if n not in skipped and engines.get(n)().availability() is None]
    for name, why in skipped.items():
        console.print(escape(f"{name} is left out of the default check: {why}; add it with "
                             f"--engine {','.join([*kept, name])}"), soft_wrap=True)


def _vocabulary_reader(backend: str) -> Callable[[str | None], AbstractContextManager[Vocabulary]]:
    """How ``backend`` reads a model's tokenizer without its weights, as its
    manifest declares (UsageError naming the backends that can)."""
    from conformbench.backends.base import backends, manifest_of

    read = manifest_of(backend).vocabulary
    if read is None:
        takers = " or ".join(f"--backend {b}" for b in backends.names() if manifest_of(b).vocabulary is not None)
        raise UsageError(f"the {backend} backend cannot read a tokenizer without its model: use {takers}")
    return read


def _store(vocab: Vocabulary, options: CheckOptions, config: CheckConfig, console: Console) -> OutcomeStore:
    """The outcomes kept in ``options.out`` (none with ``fresh``; moved aside
    when made with other settings), said on ``console``."""
    from rich.markup import escape

    from conformbench.audits.engine_check.store import PARTIAL_NAME, OutcomeStore, StoreSettings

    out = options.out
    if options.fresh and (out / PARTIAL_NAME).exists():
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


def _check_with_tokenizer(vocab: Vocabulary, options: CheckOptions, sources: list[CheckSource],
                          config: CheckConfig, total: int, console: Console) -> EngineCheckReport:
    """The check itself, resumed from DIR's store, with the model's tokenizer."""
    from conformbench.audits.engine_check import run_engine_check
    from conformbench.runner.progress import RunProgress

    with closing(_store(vocab, options, config, console)) as store, \
            RunProgress(total, unit="schemas × engines") as progress:
        return run_engine_check(vocab, sources, config, progress.step, store)
