"""Rescoring from replays alone: ``score_loaded(loaded) -> ScoredRun``, the
replays read and their items checked by the ledger first
(``reports.rescore.score_replays(paths)``)."""

from __future__ import annotations

from conformbench.arms.base import arms
from conformbench.records.results import ArmMetrics, ScoredRun, SectionResult, TaskModelResult
from conformbench.scoring.against import AgainstData, AgainstSection
from conformbench.scoring.intervals import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED
from conformbench.scoring.load import LoadedRun, LoadedTable
from conformbench.scoring.metrics import arm_metrics, ledger
from conformbench.scoring.paired import DEFAULT_DETECT, comparisons
from conformbench.scoring.sections import run_sections, sections
from conformbench.scoring.table import ScoredTable

__all__ = ["CUT_WARN_SHARE", "CUT_WARN_SHARE_CONSTRAINED", "budget_warnings", "score_loaded", "score_table",
           "with_against"]


def _sections(table: ScoredTable) -> list[SectionResult]:
    out = []
    for name in sections.names():
        section = sections.get(name)()
        if not section.applies_to(table.task):
            continue
        data = section.compute(table)
        if data is None:
            continue
        metrics = dict(section.metrics(data))
        unmeasured = dict(section.unmeasured(data))
        undeclared = sorted({key.partition("[")[0] for key in [*metrics, *unmeasured]} - set(section.gate_metrics))
        if undeclared:  # a plugin's bug: --fail-if checks names against gate_metrics before a run
            raise RuntimeError(f"report section {name!r} emits gate metrics it does not list in "
                               f"gate_metrics: {', '.join(undeclared)}")
        out.append(SectionResult(name=name, title=section.title, data=data.model_dump(mode="json"),
                                 metrics=metrics, unmeasured=unmeasured))
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


#: share of answers cut at the token budget above which a condition's numbers
#: are flagged as a product of the budget: any condition, and (stricter) a
#: condition under a grammar, where a cut answer is always invalid
CUT_WARN_SHARE = 0.05
CUT_WARN_SHARE_CONSTRAINED = 0.02


def budget_warnings(arms_: list[ArmMetrics], imported_from: str | None = None) -> list[str]:
    """A line per condition that cut too many answers, with what to do: a
    live run can rerun them with a larger budget; answers imported from
    ``imported_from`` cannot be regenerated here."""
    advice = ("rerun with a larger budget for that turn (only the cut answers are generated again) to see "
              "whether they finish") if imported_from is None else (
              f"these answers were imported from {imported_from}, so no conformbench rerun can extend them; "
              "generate them again there with a larger budget to see whether they finish")
    out = []
    for arm in arms_:
        limit = CUT_WARN_SHARE_CONSTRAINED if arms.get(arm.condition.arm).constrained else CUT_WARN_SHARE
        if arm.n and arm.truncated / arm.n > limit:
            out.append(f"{arm.key}: {arm.truncated} of {arm.n} answers ({100 * arm.truncated / arm.n:.1f}%) "
                       f"hit the token budget (over {100 * limit:.0f}%){_runaway_clause(arm)}: {advice}")
    return out


def _runaway_clause(arm: ArmMetrics) -> str:
    if not arm.runaway:
        return ""
    verb = "was" if arm.runaway == 1 else "were"
    return (f"; {arm.runaway} of them {verb} cut inside a runaway number sequence (counting on, or one "
            "endless number), which a larger budget is unlikely to finish")


def score_table(loaded: LoadedTable, detect: float = DEFAULT_DETECT) -> TaskModelResult:
    table = loaded.table
    arm_rows = [arm_metrics(table, c) for c in table.conditions]
    return TaskModelResult(
        task=table.task, model=table.model,
        correctness_label=loaded.correctness_label, task_info=loaded.task_info, n=table.n,
        arms=arm_rows, comparisons=comparisons(table, detect), ledger=ledger(table),
        exclusions=loaded.exclusions, sections=_sections(table),
        warnings=[*budget_warnings(arm_rows, loaded.imported_from),
                  *([loaded.version_note] if loaded.version_note else [])],
    )


def score_loaded(loaded: LoadedRun, detect: float = DEFAULT_DETECT) -> ScoredRun:
    """Score loaded replays (``reports.rescore.score_replays`` reads and
    checks them). ``detect``: the difference (a share) each comparison's
    items-needed is for."""
    run = ScoredRun(
        bootstrap={"resamples": BOOTSTRAP_RESAMPLES, "seed": BOOTSTRAP_SEED},
        detect=detect,
        replays=loaded.sources,
        results=[score_table(t, detect) for t in loaded.tables],
        format_mode="assert" if loaded.format_assertion else "annotate",
    )
    return run.model_copy(update={"sections": _run_sections(run)})


def with_against(run: ScoredRun, data: AgainstData) -> ScoredRun:
    """``run`` with the run section pairing it with another decoding's
    replays (``--against``), after its own sections."""
    section = SectionResult(name=AgainstSection.name, title=AgainstSection.title, data=data.model_dump(mode="json"))
    return run.model_copy(update={"sections": [*run.sections, section]})
