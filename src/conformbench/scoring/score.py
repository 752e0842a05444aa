"""Rescoring from replays alone: ``score_replays(paths) -> ScoredRun``."""

from __future__ import annotations

from pathlib import Path

from conformbench.records.results import ScoredRun, SectionResult, TaskModelResult
from conformbench.scoring.analyses import run_sections, sections
from conformbench.scoring.compare import comparisons
from conformbench.scoring.load import LoadedTable, load_replays
from conformbench.scoring.metrics import arm_metrics, ledger
from conformbench.scoring.stats import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED
from conformbench.scoring.table import ScoredTable

__all__ = ["score_replays", "score_table"]


def _sections(table: ScoredTable) -> list[SectionResult]:
    out = []
    for name in sections.names():
        section = sections.get(name)()
        if not section.applies_to(table.task):
            continue
        data = section.compute(table)
        out.append(SectionResult(
            name=name, title=section.title, data=data.model_dump(mode="json"),
            metrics=dict(section.metrics(data)),
        ))
    return out


def _run_sections(run: ScoredRun) -> list[SectionResult]:
    out = []
    for name in run_sections.names():
        section = run_sections.get(name)()
        data = section.compute(run)
        if data is not None:
            out.append(SectionResult(name=name, title=section.title,
                                     data=data.model_dump(mode="json")))
    return out


def score_table(loaded: LoadedTable) -> TaskModelResult:
    table = loaded.table
    return TaskModelResult(
        task=table.task, model=table.model,
        correctness_label=loaded.correctness_label, task_info=loaded.task_info, n=table.n,
        arms=[arm_metrics(table, c) for c in table.conditions],
        comparisons=comparisons(table), ledger=ledger(table),
        exclusions=loaded.exclusions, sections=_sections(table),
    )


def score_replays(paths: list[Path]) -> ScoredRun:
    loaded = load_replays(paths)
    run = ScoredRun(
        bootstrap={"resamples": BOOTSTRAP_RESAMPLES, "seed": BOOTSTRAP_SEED},
        replays=loaded.sources,
        results=[score_table(t) for t in loaded.tables],
    )
    return run.model_copy(update={"sections": _run_sections(run)})
