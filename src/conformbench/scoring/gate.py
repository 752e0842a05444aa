"""The CI gate: ``--fail-if 'METRIC[GLOB] OP NUMBER'``.

A tiny grammar, parsed by hand (never eval'd): a metric name, an optional
bracketed glob over condition labels (``*`` and ``?`` are the only wildcards,
so ``prompt_only[answer]`` is literal), a comparator and a number. A gate
trips when any matching (task, model, condition) value satisfies it.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from dataclasses import dataclass

from conformbench.errors import UnknownNameError, UsageError
from conformbench.records.results import ArmMetrics, Rate, ScoredRun, TaskModelResult
from conformbench.registry import did_you_mean

__all__ = ["ARM_METRICS", "Gate", "GateCheck", "evaluate_gates", "metric_table", "parse_gate"]

_OPS: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le, ">=": operator.ge, "==": operator.eq, "!=": operator.ne,
    "<": operator.lt, ">": operator.gt,
}
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TAIL = re.compile(r"\s*(<=|>=|==|!=|<|>)\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*$")


def _truncation(arm: ArmMetrics) -> Rate | None:
    n = arm.n
    return Rate(k=arm.truncated, n=n, rate=arm.truncated / n if n else 0.0, ci95=(0.0, 0.0))


ARM_METRICS: dict[str, Callable[[ArmMetrics], Rate | None]] = {
    "validity": lambda a: a.validity,
    "accuracy": lambda a: a.accuracy,
    "wrong_but_valid": lambda a: a.wrong_but_valid,
    "executable_accuracy": lambda a: a.executable_accuracy,
    "parse_rate": lambda a: a.parsed,
    "truncation": _truncation,
}


@dataclass(frozen=True)
class Gate:
    text: str
    metric: str
    glob: str | None
    op: str
    threshold: float

    def matches(self, labels: tuple[str, ...]) -> bool:
        if self.glob is None:
            return True
        pattern = re.escape(self.glob).replace(r"\*", ".*").replace(r"\?", ".")
        return any(re.fullmatch(pattern, label) for label in labels)


@dataclass(frozen=True)
class GateCheck:
    gate: Gate
    task: str
    model: str
    label: str
    value: float | None
    tripped: bool

    def describe(self) -> str:
        shown = "n/a" if self.value is None else f"{self.value:.4g}"
        where = f"{self.task} / {self.model}" + (f" / {self.label}" if self.label else "")
        return f"{self.gate.text}: {where} = {shown}"


def _bracket_end(text: str, start: int) -> int:
    depth = 0
    for i in range(start, len(text)):
        depth += {"[": 1, "]": -1}.get(text[i], 0)
        if depth == 0:
            return i
    raise UsageError(f"--fail-if {text!r}: unbalanced '['")


def parse_gate(text: str) -> Gate:
    """Parse one gate expression; a malformed one is a UsageError."""
    body = text.strip()
    name = _NAME.match(body)
    if name is None:
        raise UsageError(f"--fail-if {text!r}: expected METRIC[GLOB] OP NUMBER, "
                         "e.g. 'wrong_but_valid[constrained*] > 0.2'")
    pos, glob = name.end(), None
    if body[pos:pos + 1] == "[":
        end = _bracket_end(body, pos)
        glob, pos = body[pos + 1:end].strip(), end + 1
    tail = _TAIL.fullmatch(body[pos:])
    if tail is None:
        raise UsageError(f"--fail-if {text!r}: expected a comparator (< <= > >= == !=) "
                         "and a number after the metric")
    return Gate(text=body, metric=name.group(), glob=glob or None,
                op=tail.group(1), threshold=float(tail.group(2)))


@dataclass(frozen=True)
class _Value:
    metric: str
    label: str
    #: what a glob may match: the full condition key and the arm labels
    aliases: tuple[str, ...]
    value: float | None


def _arm_values(arm: ArmMetrics) -> list[_Value]:
    cond = arm.condition
    plain = cond.arm if cond.contract is None else f"{cond.arm}[{cond.contract}]"
    aliases = tuple(dict.fromkeys((arm.key, cond.arm_key, plain)))
    out = []
    for metric, get in ARM_METRICS.items():
        rate = get(arm)
        out.append(_Value(metric, arm.key, aliases, None if rate is None else rate.rate))
    return out


def _split_key(key: str) -> tuple[str, str]:
    if key.endswith("]") and "[" in key:
        name, _, rest = key.partition("[")
        return name, rest[:-1]
    return key, ""


def metric_table(result: TaskModelResult) -> list[_Value]:
    """Every gate-able value of one task on one model."""
    values = [v for arm in result.arms for v in _arm_values(arm)]
    for section in result.sections:
        for key, value in section.metrics.items():
            name, label = _split_key(key)
            values.append(_Value(name, label, (label,), value))
    return values


def _check_gate(gate: Gate, run: ScoredRun) -> list[GateCheck]:
    known = sorted({*ARM_METRICS, *(v.metric for r in run.results for v in metric_table(r))})
    if gate.metric not in known:
        raise UnknownNameError(f"--fail-if {gate.text!r}: unknown metric {gate.metric!r}"
                               f"{did_you_mean(gate.metric, known)}; known: {', '.join(known)}")
    checks, labels = [], []
    for result in run.results:
        for v in metric_table(result):
            if v.metric != gate.metric:
                continue
            labels.append(v.label)
            if gate.matches(v.aliases):
                tripped = v.value is not None and _OPS[gate.op](v.value, gate.threshold)
                checks.append(GateCheck(gate, result.task, result.model, v.label, v.value,
                                        tripped))
    if not checks:
        shown = ", ".join(dict.fromkeys(labels)) or "none"
        raise UsageError(f"--fail-if {gate.text!r}: [{gate.glob}] matches no condition "
                         f"of {gate.metric}; known: {shown}")
    return checks


def evaluate_gates(gates: list[Gate], run: ScoredRun) -> list[GateCheck]:
    """Every check made; the tripped ones have ``tripped`` set."""
    return [check for gate in gates for check in _check_gate(gate, run)]
