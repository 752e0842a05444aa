"""``--fail-if`` checked against a run spec before the first generation: a
gate whose task is not in the run, whose metric no scored value of the run
can have, or whose glob matches none of the conditions the run will make,
is refused then, not after the run; so is a gate on a rate a task makes 0
by definition (not evaluable, exit 2, as it would be after the run). The metric names come from the scoring
code itself: the per-condition rates (``gate.ARM_METRICS``) and the
``gate_metrics`` each report section that applies to a task declares.

A section's labels (ConCodeEval cells) exist only once scored, so a glob
over a section metric is checked after scoring (``gate.evaluate_gates``)."""

from __future__ import annotations

from conformbench.errors import GateNotEvaluableError, UnknownNameError, UsageError
from conformbench.records.items import Condition
from conformbench.records.spec import RunSpec
from conformbench.registry import did_you_mean
from conformbench.scoring.gate import ARM_METRICS, Gate, check_metric, condition_aliases
from conformbench.scoring.sections import sections
from conformbench.tasks.base import tasks, zero_by_definition

__all__ = ["check_gates_for_spec", "section_metrics"]


def section_metrics(task_name: str, samples: int = 1) -> list[str]:
    """Gate metric names the report sections will have for ``task_name``
    drawing ``samples`` answers per item."""
    out: list[str] = []
    for name in sections.names():
        out += sections.get(name)().planned_metrics(task_name, samples)
    return out


def _planned(spec: RunSpec) -> dict[str, list[Condition]]:
    """Each task of the spec and the conditions it will run."""
    return {t.name: tasks.get(t.name)(spec.task_options(t)).conditions() for t in spec.tasks}


def _check(gate: Gate, planned: dict[str, list[Condition]], samples: int) -> None:
    if gate.task is not None and gate.task not in planned:
        known = list(planned)
        raise UnknownNameError(f"--fail-if {gate.text!r}: no task {gate.task!r} in this run"
                               f"{did_you_mean(gate.task, known)}; known: {', '.join(known)}")
    scope = {k: v for k, v in planned.items() if gate.task is None or k == gate.task}
    check_metric(gate, sorted({*ARM_METRICS, *(m for task in scope for m in section_metrics(task, samples))}))
    if gate.metric not in ARM_METRICS:
        return
    zero = [t for t, conds in scope.items() if gate.metric in zero_by_definition(t)
            and any(gate.matches(condition_aliases(c)) for c in conds)]
    if zero:  # what scoring would find n/a after the run (gate.evaluate_gates): said now
        raise GateNotEvaluableError(f"--fail-if {gate.text!r} cannot be evaluated: {gate.metric} is 0 by "
                                    f"{zero[0]}'s definition, not measured; scope the gate to other tasks")
    if gate.glob is None:
        return
    labels = [c.key for conds in scope.values() for c in conds]
    if not any(gate.matches(condition_aliases(c)) for conds in scope.values() for c in conds):
        raise UsageError(f"--fail-if {gate.text!r}: [{gate.glob}] matches none of the conditions this "
                         f"run makes; known: {', '.join(dict.fromkeys(labels))}")


def check_gates_for_spec(gates: list[Gate], spec: RunSpec) -> None:
    """Refuse, before anything runs, a gate the run could never evaluate."""
    if not gates:
        return
    planned = _planned(spec)
    for gate in gates:
        _check(gate, planned, spec.decoding.samples)
