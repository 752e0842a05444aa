"""The CI gate: ``--fail-if '[TASK.]METRIC[GLOB] OP NUMBER'``.

A tiny grammar, parsed by hand (never eval'd): an optional task scope
(``gsm8k.``), a metric name, an optional bracketed glob over condition labels
(``*`` and ``?`` are the only wildcards, so ``prompt_only[answer]`` is
literal), a comparator and a number (``0.2`` or ``20%``). ``lower(...)`` or
``upper(...)`` around the metric reads a bound of its 95% interval instead
of the rate: ``lower(accuracy[constrained*]) < 0.3``. A gate trips when any
matching (task, model, condition) value satisfies it.

A gate some matching value of which is n/a (None: validity of an arm with
no contract, a cost the replay did not record, a rate 0 by the task's
definition) cannot be evaluated: ``evaluate_gates`` raises
``GateNotEvaluableError`` (exit 2) naming the metric, the conditions and
why, never a silent pass.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from conformbench.errors import GateNotEvaluableError, UnknownNameError, UsageError
from conformbench.records.items import Condition
from conformbench.records.results import ArmMetrics, Rate, ScoredRun, TaskModelResult
from conformbench.registry import did_you_mean
from conformbench.scoring.intervals import wilson
from conformbench.scoring.sections import sections
from conformbench.tasks.base import zero_by_definition

__all__ = ["ARM_METRICS", "MAX_GATE_CHARS", "Gate", "GateCheck", "check_metric", "condition_aliases", "evaluate_gates",
           "glob_match", "metric_table", "not_evaluable", "parse_gate"]

_OPS: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le, ">=": operator.ge, "==": operator.eq, "!=": operator.ne,
    "<": operator.lt, ">": operator.gt,
}
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: a task scope: a task name (they may hold '-') and a dot before the metric
_TASK = re.compile(r"([A-Za-z0-9_][A-Za-z0-9_-]*)\.(?=[A-Za-z_])")
_BOUND = re.compile(r"(lower|upper)\s*\(\s*")
#: a threshold's number, matched only on at most _MAX_NUMBER characters
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_OPS_LONGEST_FIRST = ("<=", ">=", "==", "!=", "<", ">")
#: the longest gate read: a hostile one (a 20,000-digit threshold, hundreds
#: of wildcards) is refused in one line before any matching
MAX_GATE_CHARS = 500
_MAX_NUMBER = 40
_SYNTAX = "expected [TASK.]METRIC[GLOB] OP NUMBER, e.g. 'wrong_but_valid[constrained*] > 0.2'"


def _count(k: int, n: int) -> Rate:
    return Rate(k=k, n=n, rate=k / n if n else 0.0, ci95=wilson(k, n))


ARM_METRICS: dict[str, Callable[[ArmMetrics], Rate | None]] = {
    "validity": lambda a: a.validity,
    "accuracy": lambda a: a.accuracy,
    "wrong_but_valid": lambda a: a.wrong_but_valid,
    "executable_accuracy": lambda a: a.executable_accuracy,
    "parse_rate": lambda a: a.parsed,
    "truncation": lambda a: _count(a.truncated, a.n),
    #: generations the backend failed (finish_reason "error")
    "error_rate": lambda a: _count(a.errors, a.n),
}


@dataclass(frozen=True)
class Gate:
    text: str
    metric: str
    glob: str | None
    op: str
    threshold: float
    #: only this task's results (``gsm8k.accuracy[...]``); None: every task
    task: str | None = None
    #: a bound of the 95% interval instead of the rate
    bound: Literal["lower", "upper"] | None = None

    def matches(self, labels: tuple[str, ...]) -> bool:
        if self.glob is None:
            return True
        return any(glob_match(self.glob, label) for label in labels)

    def trips(self, value: float) -> bool:
        """Whether ``value`` satisfies the comparison (the gate trips)."""
        return _OPS[self.op](value, self.threshold)


@dataclass(frozen=True)
class GateCheck:
    gate: Gate
    task: str
    model: str
    label: str
    value: float | None
    tripped: bool

    #: the condition a short section label read (gen_acc[json->json]: the
    #: cell's first condition, e.g. json->json/0shot/prompt_only[schema])
    source: str | None = None
    #: why ``value`` is None (n/a)
    why: str | None = None

    def describe(self) -> str:
        shown = "n/a" if self.value is None else f"{self.value:.4g}"
        where = f"{self.task} / {self.model}" + (f" / {self.label}" if self.label else "")
        bound = f" (the 95% interval's {self.gate.bound} bound)" if self.gate.bound else ""
        read = f" (read from {self.source})" if self.source else ""
        return f"{self.gate.text}: {where} = {shown}{bound}{read}"


def glob_match(glob: str, text: str) -> bool:
    """Whether ``glob`` (``*``: any run of characters, ``?``: one; every
    other character itself) matches all of ``text``. Never backtracks past
    the last ``*``: at most len(glob) x len(text) steps, where ``fnmatch``'s
    regex grows exponentially with ``?*`` pairs (13 pairs took 38 s)."""
    g = t = 0
    star, mark = -1, 0
    while t < len(text):
        if g < len(glob) and glob[g] == "*":
            star, mark = g, t
            g += 1
        elif g < len(glob) and glob[g] in ("?", text[t]):
            g += 1
            t += 1
        elif star >= 0:  # let the last star take one more character
            mark += 1
            g, t = star + 1, mark
        else:
            return False
    while g < len(glob) and glob[g] == "*":
        g += 1
    return g == len(glob)


def _shown(text: str) -> str:
    """A gate as messages quote it: at most 80 characters."""
    return repr(text if len(text) <= 80 else f"{text[:60]}... ({len(text)} characters)")


def _bracket_end(text: str, start: int) -> int:
    depth = 0
    for i in range(start, len(text)):
        depth += {"[": 1, "]": -1}.get(text[i], 0)
        if depth == 0:
            return i
    raise UsageError(f"--fail-if {_shown(text)}: unbalanced '['")


def _term(body: str, pos: int, text: str) -> tuple[str | None, str, str | None, int]:
    """[TASK.]METRIC[GLOB] from ``pos``: (task, metric, glob, end)."""
    task = _TASK.match(body, pos)
    if task is not None:
        pos = task.end()
    name = _NAME.match(body, pos)
    if name is None:
        raise UsageError(f"--fail-if {_shown(text)}: {_SYNTAX}")
    pos, glob = name.end(), None
    if body[pos:pos + 1] == "[":
        end = _bracket_end(body, pos)
        glob, pos = body[pos + 1:end].strip(), end + 1
    return (task.group(1) if task else None), name.group(), glob or None, pos


def _tail(rest: str, text: str) -> tuple[str, float]:
    """The comparator and threshold after the metric, read by hand: the
    number at most _MAX_NUMBER characters (a regex over a 20,000-digit
    number backtracked for 30 s)."""
    rest = rest.strip()
    op = next((o for o in _OPS_LONGEST_FIRST if rest.startswith(o)), None)
    number = rest[len(op):].strip() if op is not None else ""
    percent = number.endswith("%")
    number = number[:-1].rstrip() if percent else number
    if len(number) > _MAX_NUMBER:
        raise UsageError(f"--fail-if {_shown(text)}: the threshold is {len(number)} characters long, "
                         f"more than the {_MAX_NUMBER} a number takes")
    if op is None or not _NUMBER.fullmatch(number):
        raise UsageError(f"--fail-if {_shown(text)}: expected a comparator (< <= > >= == !=) "
                         "and a number (0.2 or 20%) after the metric")
    threshold = float(number) / (100 if percent else 1)
    if not math.isfinite(threshold):  # 1e999 reads as infinity, as `inf` (refused above) would
        raise UsageError(f"--fail-if {_shown(text)}: the threshold {number!r} is not a finite number")
    return op, threshold


def parse_gate(text: str) -> Gate:
    """Parse one gate expression; a malformed one is a UsageError. Every
    step is linear in the gate's length, which is bounded."""
    if len(text) > MAX_GATE_CHARS:
        raise UsageError(f"--fail-if {_shown(text)}: a gate is at most {MAX_GATE_CHARS} characters")
    body = text.strip()
    bound = _BOUND.match(body)
    task, metric, glob, pos = _term(body, bound.end() if bound else 0, text)
    if bound is not None:
        close = re.compile(r"\s*\)").match(body, pos)
        if close is None:
            raise UsageError(f"--fail-if {_shown(text)}: {bound.group(1)}( needs a closing ')' after the metric")
        pos = close.end()
    op, threshold = _tail(body[pos:], text)
    return Gate(text=body, metric=metric, glob=glob, op=op, threshold=threshold, task=task,
                bound="lower" if bound and bound.group(1) == "lower" else "upper" if bound else None)


@dataclass(frozen=True)
class _Value:
    metric: str
    label: str
    #: what a glob may match: the full condition key and the arm labels
    aliases: tuple[str, ...]
    value: float | None
    #: the 95% interval, where the metric has one (per-condition rates)
    ci95: tuple[float, float] | None = None
    source: str | None = None
    #: why ``value`` is None (n/a)
    why: str | None = None

    def read(self, bound: str | None) -> float | None:
        if bound is None or self.value is None or self.ci95 is None:
            return self.value
        return self.ci95[0] if bound == "lower" else self.ci95[1]


def condition_aliases(cond: Condition) -> tuple[str, ...]:
    """What a glob may match of a condition: its key and its arm labels."""
    plain = cond.arm if cond.contract is None else f"{cond.arm}[{cond.contract}]"
    return tuple(dict.fromkeys((cond.key, cond.arm_key, plain)))


#: why a per-condition rate is None (every answer's score left it None)
_NA_WHY: dict[str, str] = {
    "validity": "no answer of it was checked against a schema (a condition with no contract has no validity)",
    "accuracy": "no answer of it was checked against a gold answer",
    "executable_accuracy": "the task does not execute its answers",
}


def _na_why(metric: str, arm: ArmMetrics) -> str:
    if metric == "wrong_but_valid":  # n/a when validity or accuracy is
        return _NA_WHY["validity" if arm.validity is None else "accuracy"]
    return _NA_WHY.get(metric, "the scores leave it undefined")


def _arm_values(arm: ArmMetrics, task: str) -> list[_Value]:
    aliases = condition_aliases(arm.condition)
    by_definition = zero_by_definition(task)
    out = []
    for metric, get in ARM_METRICS.items():
        rate = get(arm)
        if not arm.n:  # truncation and error_rate would read 0 of 0 as 0
            out.append(_Value(metric, arm.key, aliases, None,
                              why="it has no answer (every item was left out of it: the report's exclusions say why)"))
        elif metric in by_definition:  # a 0 no answer could change: nothing a gate can check
            out.append(_Value(metric, arm.key, aliases, None, why=f"it is 0 by {task}'s definition, not measured"))
        elif rate is None:
            out.append(_Value(metric, arm.key, aliases, None, why=_na_why(metric, arm)))
        else:
            out.append(_Value(metric, arm.key, aliases, rate.rate, rate.ci95))
    return out


def _split_key(key: str) -> tuple[str, str]:
    if key.endswith("]") and "[" in key:
        name, _, rest = key.partition("[")
        return name, rest[:-1]
    return key, ""


def _section_values(metrics: dict[str, float], unmeasured: dict[str, str]) -> list[_Value]:
    """A short label (gen_acc[json->json]) names the condition it read:
    the first full label of its cell (scoring.concodeeval.gate_metrics).
    ``unmeasured``: the section's n/a metrics, keyed alike, with why."""
    split = [(*_split_key(key), value) for key, value in metrics.items()]
    out = []
    for name, label, value in split:
        source = None if "/" in label or not label else next(
            (full for n, full, _ in split if n == name and full.startswith(label + "/")), None)
        out.append(_Value(name, label, (label,), value, source=source))
    for key, why in unmeasured.items():
        name, label = _split_key(key)
        out.append(_Value(name, label, (label,), None, why=why))
    return out


def metric_table(result: TaskModelResult) -> list[_Value]:
    """Every gate-able value of one task on one model."""
    values = [v for arm in result.arms for v in _arm_values(arm, result.task)]
    for section in result.sections:
        values += _section_values(section.metrics, section.unmeasured)
    return values


def _scoped(gate: Gate, run: ScoredRun) -> list[TaskModelResult]:
    if gate.task is None:
        return run.results
    found = [r for r in run.results if r.task == gate.task]
    if not found:
        known = sorted({r.task for r in run.results})
        raise UnknownNameError(f"--fail-if {gate.text!r}: no task {gate.task!r} in this run"
                               f"{did_you_mean(gate.task, known)}; known: {', '.join(known) or 'none'}")
    return found


def check_metric(gate: Gate, known: list[str]) -> None:
    """Refuse a metric not in ``known``, and a bound of one without an interval."""
    if gate.metric not in known:
        need = _section_need(gate.metric)
        if need:  # a real metric this run lacks: say what gives it, not "unknown"
            raise UsageError(f"--fail-if {gate.text!r}: this run has no {gate.metric!r}, which needs {need}; "
                             f"metrics it has: {', '.join(known)}")
        every = [*known, *(m for name in sections.names() for m in sections.get(name)().gate_metrics)]
        raise UnknownNameError(f"--fail-if {gate.text!r}: unknown metric {gate.metric!r}"
                               f"{did_you_mean(gate.metric, every)}; known: {', '.join(known)}")
    if gate.bound is not None and gate.metric not in ARM_METRICS:
        raise UsageError(f"--fail-if {gate.text!r}: {gate.bound}() reads an interval, which only the "
                         f"per-condition rates have: {', '.join(ARM_METRICS)}")


def _section_need(metric: str) -> str:
    """What a run needs for a report section's gate metric ('' when no
    section declares it)."""
    for name in sections.names():
        section = sections.get(name)()
        if metric in section.gate_metrics:
            return section.gate_metrics_need or f"report section {name!r}"
    return ""


def _check_gate(gate: Gate, run: ScoredRun) -> list[GateCheck]:
    results = _scoped(gate, run)
    check_metric(gate, sorted({*ARM_METRICS, *(v.metric for r in results for v in metric_table(r))}))
    checks, labels = [], []
    for result in results:
        for v in metric_table(result):
            if v.metric != gate.metric:
                continue
            labels.append(v.label)
            if gate.matches(v.aliases):
                value = v.read(gate.bound)
                tripped = value is not None and _OPS[gate.op](value, gate.threshold)
                checks.append(GateCheck(gate, result.task, result.model, v.label, value, tripped, v.source,
                                        None if value is not None else v.why or "not measured"))
    if not checks:
        shown = ", ".join(dict.fromkeys(labels)) or "none"
        raise UsageError(f"--fail-if {gate.text!r}: [{gate.glob}] matches no condition "
                         f"of {gate.metric}; known: {shown}")
    return checks


def not_evaluable(gate: Gate, checks: list[GateCheck]) -> str | None:
    """The line saying why ``gate`` cannot be evaluated (some value it
    matches is n/a), or None when every value is known."""
    na = [c for c in checks if c.value is None]
    if not na:
        return None
    several = len({(c.task, c.model) for c in checks}) > 1
    by_why: dict[str, list[str]] = {}
    for c in na:
        where = (c.label or c.gate.metric) + (f" ({c.task} / {c.model})" if several else "")
        by_why.setdefault(c.why or "not measured", []).append(where)
    shown = [", ".join(where[:4]) + (f" and {len(where) - 4} more" if len(where) > 4 else "") + f": {why}"
             for why, where in by_why.items()]
    return (f"--fail-if {gate.text!r} cannot be evaluated: {gate.metric} is n/a for {len(na)} of the "
            f"{len(checks)} conditions it matches ({'; '.join(shown)}); a gate is checked only where every "
            "value it matches is known: leave those conditions out of [GLOB], or measure them")


def evaluate_gates(gates: list[Gate], run: ScoredRun) -> list[GateCheck]:
    """Every check made; the tripped ones have ``tripped`` set. A gate some
    matching value of which is n/a is a ``GateNotEvaluableError`` (exit 2)."""
    checks = [check for gate in gates for check in _check_gate(gate, run)]
    for gate in gates:
        line = not_evaluable(gate, [c for c in checks if c.gate is gate])
        if line is not None:
            raise GateNotEvaluableError(line)
    return checks
