"""What ``engines cost`` does, as a library function:

    from conformbench import api
    done = api.cost(api.CostOptions(out=Path("cost"), base_url="http://127.0.0.1:8000/v1", n=4))
    done.report.comparisons            # grammar on against off, per level and cache (report.json)
    done.exit_code                     # 1 when a fail_if gate tripped

It takes one options record (the command's flags, one field each) and
returns the report, the files written and each gate's check. The progress
bar (unless ``progress=False``) and the note of a resumed journal go to
stderr, as the command shows them. The serving modules are imported when
it runs, so that ``conformbench.api`` stays light to import.
"""

from __future__ import annotations

import typing
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from conformbench.errors import UsageError

if typing.TYPE_CHECKING:
    from conformbench.runner.progress import RunProgress
    from conformbench.schemas.case import ExcludedSchema
    from conformbench.serving.command import CostTarget
    from conformbench.serving.fail_if import CostCheck
    from conformbench.serving.journal import BatchKey
    from conformbench.serving.measure import CostConfig, CostSender
    from conformbench.serving.report import CostReport
    from conformbench.serving.workload import CostPrompt

__all__ = ["CostOptions", "CostResult", "cost"]


@dataclass(frozen=True)
class CostOptions:
    """The flags of ``engines cost``, one field each (``()``: the command's
    default). ``backend``: ``openai`` (a server at ``base_url``) or
    ``llamacpp`` (``model`` in this process); ``dialect`` None: found by the
    canary; ``progress``: the progress bar on stderr."""

    out: Path
    base_url: str | None = None
    model: str | None = None
    backend: str = "openai"
    engine: str | None = None
    threads: int | None = None
    concurrency: tuple[int, ...] = (1, 4)
    n: int = 4
    repeats: int = 2
    caches: tuple[str, ...] = ()
    rate: float | None = None
    prompts_file: Path | None = None
    schemas: Path | None = None
    dialect: str | None = None
    max_tokens: int = 64
    timeout_s: float = 600.0
    seed: int = 0
    fail_if: tuple[str, ...] = ()
    progress: bool = True


@dataclass(frozen=True)
class CostResult:
    """A cost run's report, the files it wrote (report.json, report.md,
    latency.svg) and each ``fail_if`` gate's check."""

    report: CostReport
    files: list[Path]
    checks: list[CostCheck]

    @property
    def exit_code(self) -> int:
        """1 when a gate tripped, else 0 (as the command exits)."""
        return 1 if any(c.tripped for c in self.checks) else 0


def cost(options: CostOptions) -> CostResult:
    """Measure what a grammar costs: the same prompts streamed with the
    grammar off and on (warm and cold grammar cache), at each concurrency
    level, timed per request and every answer validated against its full
    schema, resuming from ``options.out``'s journal. Every option is checked
    (UsageError in one line) before any file is read; a gate matching an
    n/a value raises ``GateNotEvaluableError`` once the reports are written."""
    from conformbench.backends.openai.backend import AUTO_DIALECT
    from conformbench.backends.openai.dialects import dialect_names
    from conformbench.registry import check_choice
    from conformbench.serving.command import CostTarget
    from conformbench.serving.fail_if import check_cost_gates, parse_cost_gate

    check_choice("--dialect", options.dialect, [AUTO_DIALECT, *dialect_names()])
    gates = [parse_cost_gate(text) for text in options.fail_if]
    config = _config(options)
    sender = _sender(options, config)  # checked before any file is read
    prompts, source, excluded = _prompts(options.prompts_file, options.schemas, config.n)
    dialect = None if options.dialect == AUTO_DIALECT else options.dialect
    target = CostTarget(options.base_url, options.model, dialect, source, excluded)
    report, paths = _measure(sender(target), target, config, prompts, options)
    return CostResult(report, paths, check_cost_gates(gates, report))


def _config(options: CostOptions) -> CostConfig:
    """The measurement's settings, sized by ``CONFORMBENCH_TEST_SIZE`` (runner/test_size.py)."""
    from conformbench.runner.test_size import capped, capped_levels
    from conformbench.serving.measure import CACHES, CostConfig

    levels = options.concurrency
    if not levels or any(isinstance(c, bool) or not isinstance(c, int) or c < 1 for c in levels):
        raise UsageError(f"concurrency: expected whole numbers of at least 1, not {levels!r}")
    if len(set(levels)) != len(levels):
        raise UsageError("--concurrency names a level twice")
    return CostConfig(levels=capped_levels(levels), n=capped(options.n), repeats=capped(options.repeats),
                      caches=options.caches or CACHES, rate=options.rate, seed=options.seed,
                      max_tokens=options.max_tokens, timeout_s=options.timeout_s)


def _prompts(prompts_file: Path | None, schemas: Path | None,
             n: int) -> tuple[list[CostPrompt], str, tuple[ExcludedSchema, ...]]:
    from conformbench.serving.workload import bfcl_prompts, corpus_prompts, file_prompts

    if prompts_file is not None and schemas is not None:
        raise UsageError("--prompts and --schemas both name the prompts: give one")
    if schemas is not None:
        prompts, excluded = corpus_prompts(schemas, n)
        return prompts, f"corpus {schemas.name}", excluded
    if prompts_file is not None:
        return file_prompts(prompts_file, n), prompts_file.name, ()
    return bfcl_prompts(n), "bfcl-simple", ()


_Make = Callable[["CostTarget"], "CostSender"]


def _sender(options: CostOptions, config: CostConfig) -> _Make:
    """What makes the sender, once every option is checked (UsageError in one line)."""
    from conformbench.records.spec import DEFAULT_LOCAL_ENGINE
    from conformbench.serving.command import cost_backend
    from conformbench.serving.local import LlamaCppSender, check_local

    backend = options.backend
    if backend == "openai":
        if options.base_url is None:
            raise UsageError("engines cost needs --base-url URL (a server), or --backend llamacpp --model GGUF")
        if options.engine is not None or options.threads is not None:
            raise UsageError("--engine and --threads are for --backend llamacpp: a server decodes with its own")
        return lambda target: cost_backend(target, config)  # reached and its grammar proved
    if options.base_url is not None or options.dialect is not None:
        raise UsageError(f"--base-url and --dialect are for a server; --backend {backend} runs the model here")
    local_engine = options.engine or DEFAULT_LOCAL_ENGINE
    check_local(backend, config, local_engine)
    threads = options.threads

    def make(target: CostTarget) -> CostSender:
        if target.model is None:
            raise UsageError(f"--backend {backend} needs --model (a GGUF path or name)")
        return LlamaCppSender(target.model, local_engine, threads, n_ctx=4096)
    return make


def _measure(sender: CostSender, target: CostTarget, config: CostConfig, prompts: list[CostPrompt],
             options: CostOptions) -> tuple[CostReport, list[Path]]:
    """The batches measured into the journal (a rerun resumes it, said on
    stderr), with a progress bar, and the report written."""
    from rich.markup import escape

    from conformbench.runner.progress import RunProgress
    from conformbench.runner.progress import console as wide_console
    from conformbench.serving.command import open_journal, run_cost
    from conformbench.serving.measure import plan_size

    journal = open_journal(sender, target, config, prompts, options.out)
    if journal.batches:
        wide_console(stderr=True).print(escape(f"resuming: {len(journal.batches)} batches kept in {journal.path}"))
    total = plan_size(config) * config.n
    with RunProgress(total, done=len(journal.batches) * config.n, unit="requests", quiet=not options.progress) as bar:
        return run_cost(sender, target, config, prompts, journal, _Progress(bar, config))


class _Progress:
    """The bar counts requests; a line as each batch begins (a log sees one at once)."""

    def __init__(self, bar: RunProgress, config: CostConfig) -> None:
        from conformbench.serving.measure import plan_size

        self.bar, self.config, self.batches = bar, config, plan_size(config)

    def batch(self, key: BatchKey) -> None:
        grammar = "grammar off" if key[2] == "off" else f"grammar on, {key[2]} cache"
        self.bar.stage(f"repeat {key[0] + 1}/{self.config.repeats}, concurrency {key[1]}, {grammar}")

    def request(self, key: BatchKey) -> None:
        self.bar.step(self.bar_description(key), 1)

    def bar_description(self, key: BatchKey) -> str:
        return f"c{key[1]} {key[2]} r{key[0] + 1}"
