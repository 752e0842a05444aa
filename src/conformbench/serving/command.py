"""``engines cost`` end to end, below the CLI: the server reached, its
structured-output dialect found and proved applied (the constraint canary),
the batches measured into the journal, and the report written from it,
also when a batch failed (what was measured is kept, then the failure is
raised as one line)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformbench.audits.canary import check_canary, server_error_text
from conformbench.backends.openai.backend import AUTO_DIALECT, OpenAICompatBackend
from conformbench.backends.openai.http import Retryable, get_json
from conformbench.errors import BackendError
from conformbench.files import write_files
from conformbench.records.generation import BackendConfig
from conformbench.records.spec import SERVER_ENGINE
from conformbench.schemas.case import ExcludedSchema
from conformbench.serving.chart import latency_svg
from conformbench.serving.journal import CostJournal
from conformbench.serving.measure import CostConfig, CostProgress, CostSender, ServerSender, batch_plan, measure
from conformbench.serving.report import CostReport, build_report
from conformbench.serving.report_markdown import cost_markdown
from conformbench.serving.workload import CostPrompt

__all__ = ["CHART_NAME", "CostTarget", "cost_backend", "open_journal", "run_cost", "write_cost"]

CHART_NAME = "latency.svg"
_REACH_S = 10.0


@dataclass(frozen=True)
class CostTarget:
    base_url: str | None
    model: str | None
    dialect: str | None
    #: where the prompts came from, for the report ("bfcl-simple" or the file's name)
    source: str
    #: a corpus's schemas left out, each with why
    excluded: tuple[ExcludedSchema, ...] = ()


def cost_backend(target: CostTarget, config: CostConfig) -> ServerSender:
    """The openai backend for the server (its URL checks, dialects and
    client), reached once (a URL that answers nothing is one BackendError
    line) and its dialect found and proved by the canary."""
    extra = {"response_format_dialect": target.dialect or AUTO_DIALECT}
    backend = OpenAICompatBackend(BackendConfig(model=target.model, base_url=target.base_url,
                                                concurrency=max(config.levels), timeout_s=config.timeout_s,
                                                max_retries=0, extra=extra))
    try:
        get_json(backend.endpoint("models"), backend.auth_headers, min(config.timeout_s, _REACH_S))
    except Retryable as exc:
        raise BackendError(f"cannot reach {backend.base_url}: {exc}") from None
    except ValueError:
        pass  # it answered: a server may list no models and still complete
    check_canary(backend, SERVER_ENGINE, config.seed)
    return ServerSender(backend)


def _header(target: CostTarget, sender: CostSender, config: CostConfig,
            prompts: list[CostPrompt]) -> dict[str, Any]:
    return {**sender.identity(), "model": target.model,
            "prompts": target.source, "n": config.n, "ids": [p.id for p in prompts],
            "levels": list(config.levels), "repeats": config.repeats, "caches": list(config.caches),
            "rate": config.rate, "seed": config.seed, "max_tokens": config.max_tokens,
            "timeout_s": config.timeout_s}


def write_cost(report: CostReport, out: Path) -> list[Path]:
    paths = [out / "report.json", out / "report.md", out / CHART_NAME]
    chart = CHART_NAME if report.arms else None
    texts: dict[Path, str] = {paths[0]: report.model_dump_json(indent=2) + "\n",
                              paths[1]: cost_markdown(report, chart)}
    if chart:
        texts[paths[2]] = latency_svg(report)
    write_files(texts)
    return [p for p in paths if p in texts]


def open_journal(sender: CostSender, target: CostTarget, config: CostConfig, prompts: list[CostPrompt],
                 out: Path) -> CostJournal:
    """The journal in ``out`` for these settings: a new one, or the one a
    run of the same settings left (its finished batches kept)."""
    return CostJournal(out, json.loads(json.dumps(_header(target, sender, config, prompts))))


def run_cost(sender: CostSender, target: CostTarget, config: CostConfig, prompts: list[CostPrompt],
             journal: CostJournal, progress: CostProgress) -> tuple[CostReport, list[Path]]:
    """Measure what ``journal`` lacks (``sender`` from ``cost_backend`` or
    serving/local.py) and write the report beside it; on a failed batch the
    report of the batches before it is written, then the BackendError raised."""
    out = journal.path.parent
    failure: BackendError | None = None
    try:
        measure(sender, prompts, config, journal, progress)
    except BackendError as exc:
        failure = BackendError(server_error_text(str(exc)))
    finally:
        journal.close()
    report = build_report(journal, prompts, batch_plan(config), sender.describe(), target.excluded)
    paths = write_cost(report, out)
    if failure is not None:
        kept = f"; kept {len(journal.batches)} finished batches in {journal.path}" if journal.batches else ""
        raise BackendError(f"{failure}{kept}")
    return report, paths
