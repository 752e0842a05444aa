"""``engines cost --fail-if``: the scoring gate's grammar (scoring/gate.py)
over the cost report's comparisons. A metric is one of ``COST_METRICS``; its
bracketed glob picks comparisons by label (``c4/warm``: concurrency 4, warm
cache; also ``4``, ``warm`` and ``c4``): ``tpot_ratio[c16/*] > 1.2``. A
ratio's value is its median over the repeats; ``lower(...)`` and
``upper(...)`` read the lowest and highest repeat, or a validity's 95%
interval. A matched comparison whose value is n/a (no repeat answered both
ways, no answer to validate) makes the gate not evaluable: exit 2, never a
silent pass."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from conformbench.errors import GateNotEvaluableError, UsageError
from conformbench.records.results import Rate
from conformbench.registry import did_you_mean
from conformbench.scoring.gate import Gate, parse_gate
from conformbench.serving.report import Comparison, CostReport, RatioSpread

__all__ = ["COST_METRICS", "CostCheck", "check_cost_gates", "parse_cost_gate"]

_Read = Callable[[Comparison], RatioSpread | Rate]
COST_METRICS: dict[str, _Read] = {
    "throughput_ratio": lambda c: c.throughput_ratio,
    "tok_s_ratio": lambda c: c.tok_s_ratio,
    "ttft_ratio": lambda c: c.ttft_ratio,
    "tpot_ratio": lambda c: c.tpot_ratio,
    "validity_on": lambda c: c.validity_on,
    "validity_off": lambda c: c.validity_off,
}


#: why a comparison's value is None
_NA_WHY = {name: "no repeat measured it both with and without the grammar" for name in COST_METRICS} | {
    "validity_on": "no answer with the grammar to validate", "validity_off": "no answer without it to validate"}


@dataclass(frozen=True)
class CostCheck:
    gate: Gate
    label: str
    value: float | None
    tripped: bool

    def describe(self) -> str:
        shown = "n/a" if self.value is None else f"{self.value:.4g}"
        return f"{self.gate.text}: {self.label} = {shown}"


def parse_cost_gate(text: str) -> Gate:
    """A gate on the cost report; UsageError (with a did-you-mean) for a
    metric it does not have or a task scope."""
    gate = parse_gate(text)
    if gate.task is not None:
        raise UsageError(f"--fail-if {text!r}: the cost report has no tasks; drop {gate.task}.")
    if gate.metric not in COST_METRICS:
        raise UsageError(f"--fail-if {text!r}: no metric {gate.metric!r}{did_you_mean(gate.metric, list(COST_METRICS))}"
                         f"; known: {', '.join(COST_METRICS)}")
    return gate


def _value(read: RatioSpread | Rate, bound: str | None) -> float | None:
    if isinstance(read, Rate):
        if not read.n:
            return None
        return read.rate if bound is None else read.ci95[0 if bound == "lower" else 1]
    return read.median if bound is None else read.low if bound == "lower" else read.high


def _labels(c: Comparison) -> tuple[str, ...]:
    return f"c{c.concurrency}/{c.cache}", f"c{c.concurrency}", str(c.concurrency), c.cache


def check_cost_gates(gates: list[Gate], report: CostReport) -> list[CostCheck]:
    """Every check made; UsageError where a glob matches no comparison."""
    checks: list[CostCheck] = []
    for gate in gates:
        matched = [c for c in report.comparisons if gate.matches(_labels(c))]
        if not matched:
            known = ", ".join(_labels(c)[0] for c in report.comparisons) or "none"
            raise UsageError(f"--fail-if {gate.text!r}: [{gate.glob}] matches no comparison; known: {known}")
        mine = []
        for c in matched:
            value = _value(COST_METRICS[gate.metric](c), gate.bound)
            mine.append(CostCheck(gate, _labels(c)[0], value, value is not None and gate.trips(value)))
        na = [c.label for c in mine if c.value is None]
        if na:
            raise GateNotEvaluableError(
                f"--fail-if {gate.text!r} cannot be evaluated: {gate.metric} is n/a for {len(na)} of the "
                f"{len(mine)} comparisons it matches ({', '.join(na)}: {_NA_WHY[gate.metric]}); leave them "
                "out of [GLOB] or measure again")
        checks += mine
    return checks
