"""Number and label formatting shared by the Markdown and HTML reports, so
both say the same thing in the same words."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any, Literal

from conformbench.records.results import ArmMetrics, Comparison, Delta, LedgerRow, Rate, ReplaySource, TaskModelResult
from conformbench.scoring.intervals import PAIRED_BOOTSTRAP_MIN_DISCORDANT, PAIRED_BOOTSTRAP_MIN_N, exact_test_note
from conformbench.scoring.percent import pct, pts, rate_ci

__all__ = [
    "ARM_INTERVALS",
    "STATE_ORDER",
    "ComparisonLine",
    "changed_transitions",
    "comparison_lines",
    "comparisons_heading",
    "counted_text",
    "cut_mark",
    "cut_text",
    "delta_text",
    "effect_call",
    "effect_detected",
    "facts",
    "flips_text",
    "format_mode_text",
    "metric_label",
    "n_line",
    "pct",
    "power_text",
    "rate_text",
    "role_text",
    "rounds_text",
    "samples_text",
    "share_text",
    "source_line",
    "underpowered",
]

#: ledger states in display order
STATE_ORDER = ("valid/right", "valid/wrong", "invalid/right", "invalid/wrong",
               "n/a/right", "n/a/wrong", "valid/n/a", "invalid/n/a", "n/a/n/a")


#: how the rates of an arms table are bracketed (said in its header)
ARM_INTERVALS = "95% Wilson"


def format_mode_text(mode: str | None) -> str:
    """The report's line on how ``format`` was read in scoring."""
    if mode == "annotate":
        return ("formats: annotations (JSON Schema 2020-12's default, as in the ConCodeEval paper): "
                "`format` is not checked; --format-assertion checks it")
    if mode == "assert":
        return ("formats: asserted (--format-assertion): each draft's format vocabulary is checked; "
                "without the flag `format` is an annotation (JSON Schema 2020-12's default)")
    return "formats: not recorded (reports made before the choice existed asserted them)"


def comparisons_heading(bootstrap: dict[str, int]) -> str:
    """What the intervals of the comparisons are (said where they start)."""
    return (f"Differences between arms on the same items, with 95% paired intervals: the paired "
            f"bootstrap ({bootstrap.get('resamples')} resamples, seed {bootstrap.get('seed')}) over "
            f"{PAIRED_BOOTSTRAP_MIN_N}+ items and {PAIRED_BOOTSTRAP_MIN_DISCORDANT}+ discordant pairs, "
            "else Newcombe's score interval (marked); an effect is detected only when the interval "
            "excludes 0 and the exact McNemar test agrees (p < 0.05); a per-arm rate above carries "
            "a 95% Wilson interval.")


def rate_text(rate: Rate | None, missing: str = "n/a") -> str:
    if rate is None:
        return missing
    return rate_ci(rate.rate, rate.ci95)


def share_text(k: int, n: int) -> str:
    """'3 (1.5%)': a count with its share of N ('0' when none)."""
    return "0" if k == 0 else f"{k} ({pct(k / n) if n else 'n/a'})"


def cut_text(arm: ArmMetrics) -> str:
    """The 'cut' cell: '8 (4.0%)', or '8 (4.0%; 7 runaway)' when some of
    the cut answers end inside a runaway number sequence."""
    if not arm.runaway:
        return share_text(arm.truncated, arm.n)
    return f"{arm.truncated} ({pct(arm.truncated / arm.n)}; {arm.runaway} runaway)"


def n_line(result: TaskModelResult) -> str:
    """The N sentence of a task's report: items, and how many of them left
    a condition (an engine could not compile the schema, or the run is
    unfinished)."""
    left = {e.item_id for e in result.exclusions}
    conds = {e.condition for e in result.exclusions}
    note = result.task_info.get("items_note")  # e.g. validation's: 2 items per schema
    out = f"N = {result.n} items scored" + (f" ({note})" if note else "")
    if left:
        out += (f"; {len(left)} of them left out of {len(conds)} condition(s) only "
                "(listed under Exclusions)")
    return (out + ". Each condition's rates are over its own N; intervals are 95% "
            "(Wilson for rates; for deltas, over the items both conditions have, the paired bootstrap "
            "or, over few items or discordant pairs, Newcombe's score interval). "
            "'cut' = hit the token budget ('runaway': of those, cut inside a runaway number "
            "sequence such as counting on, which a larger budget is unlikely to finish), "
            "'looped' = ended by the loop stop.")


def delta_text(delta: Delta, n: int) -> str:
    """The call on a delta, then its size and interval: 'detected at N=200:
    +12.0 pts [+4.0, +20.0] (McNemar p=0.001)'; 'no detectable effect at
    N=50: +2.0 pts [-4.0, +8.0] (...)' when the interval includes 0 (a null
    is never rounded into an effect); 'not established at N=4: ...' with the
    reason when the interval excludes 0 and the exact test does not reject."""
    p = f"McNemar p={delta.mcnemar_p:.3g}"
    if delta.method == "newcombe":
        p = f"Newcombe; {p}"
    call = effect_call(delta)
    words = {"detected": "detected", "not established": "not established", "none": "no detectable effect"}[call]
    note = exact_test_note(delta.excludes_0, delta.discordant) if call == "not established" else ""
    lo, hi = delta.ci95
    return (f"{words} at N={n}: {pts(delta.delta)} pts [{pts(lo)}, {pts(hi)}] ({p}"
            + (f"; {note})" if note else ")"))


def effect_detected(delta: Delta) -> bool:
    """The interval excludes 0 and the exact test agrees (a report made
    before ``detected`` existed: its interval alone)."""
    return delta.excludes_0 if delta.detected is None else delta.detected


def effect_call(delta: Delta) -> Literal["detected", "not established", "none"]:
    """The verdict's call on a delta (docs/statistics.md): detected; not
    established (the interval excludes 0, the exact test does not reject);
    none (the interval includes 0)."""
    if effect_detected(delta):
        return "detected"
    return "not established" if delta.excludes_0 else "none"


def power_text(delta: Delta, n: int) -> str:
    """Whether N suffices: 'N=200 detects >= 3.9 pts (80% power); 10 pts
    needs N=78', or 'underpowered: ...' when nothing was detected and N is
    below what the asked difference needs; 'N=6 sufficed for this effect;
    10 pts needs ...' beside a detected effect ('' in reports made before)."""
    if delta.detect is None:
        return ""
    mdd = ("detects no difference at 80% power" if delta.mdd80 is None
           else f"detects {100 * delta.mdd80:.1f}+ pts at 80% power")
    needs = ("more than a million items" if delta.n_needed is None else f"N={delta.n_needed}")
    ask = f"{100 * delta.detect:g} pts needs {needs} at this discordance"
    if underpowered(delta, n):
        return f"underpowered: N={n} {mdd}; {ask}"
    if effect_detected(delta):  # N sufficed for this effect; the asked difference is another question
        return f"N={n} sufficed for this effect; {ask}"
    return f"N={n} {mdd}; {ask}"


def underpowered(delta: Delta, n: int) -> bool:
    """No effect detected, and fewer items than the asked difference needs."""
    if delta.detect is None or effect_detected(delta):
        return False
    return delta.n_needed is None or n < delta.n_needed


def rounds_text(row: LedgerRow, key: str) -> str:
    """A multi-round arm's earlier rounds of the item, e.g. 'after round 1
    invalid/wrong (required at (root))' ('' for a one-answer item)."""
    parts = []
    for n, r in enumerate(row.rounds.get(key, []), start=1):
        errors = ", ".join(r.errors[:3]) + (", ..." if len(r.errors) > 3 else "")
        parts.append(f"round {n} {r.state}" + (f" ({errors})" if errors else ""))
    return "after " + "; ".join(parts) if parts else ""


def samples_text(row: LedgerRow, key: str) -> str:
    """Every sample's state of an item under a condition, most common first,
    e.g. '3 samples: valid/right ×2, invalid/wrong (cut) ×1' ('' at K = 1),
    after a multi-round arm's earlier rounds (``rounds_text``)."""
    rounds = rounds_text(row, key)
    if not row.later_samples.get(key):
        return rounds
    states = [s.state + cut_mark(s.truncated, s.runaway) for s in row.samples(key)]
    text = f"{len(states)} samples: " + ", ".join(f"{state} ×{n}" for state, n in Counter(states).most_common())
    return f"{rounds}; {text}" if rounds else text


def cut_mark(truncated: bool, runaway: bool) -> str:
    """' (cut, runaway)', ' (cut)' or '' after a ledger state."""
    if runaway:
        return " (cut, runaway)"
    return " (cut)" if truncated else ""


def metric_label(metric: str, correctness_label: str) -> str:
    return {
        "accuracy": correctness_label,
        "validity": "schema validity",
        "wrong_but_valid": "wrong-but-valid",
        "executable_accuracy": "executable accuracy",
    }.get(metric, metric)


def role_text(comparison: Comparison) -> str:
    if comparison.role == "headline":
        return "headline: same prompt and contract, only the grammar differs"
    if comparison.role == "policy":
        return "policy: an arm against another way to the same contract (Arm.compare_with), same items"
    return "confounded: the prompt changes too, not the grammar's effect alone"


def flips_text(comparison: Comparison) -> str:
    if comparison.flips is None:
        return ""
    f = comparison.flips
    return f"{f.right_to_wrong} right→wrong, {f.wrong_to_right} wrong→right"


def changed_transitions(comparison: Comparison) -> list[tuple[str, int]]:
    """Transitions whose state changed, largest first."""
    moved = [(k, v) for k, v in comparison.transitions.items()
             if k.split(" -> ")[0] != k.split(" -> ")[1]]
    return sorted(moved, key=lambda kv: (-kv[1], kv[0]))


@dataclass(frozen=True)
class ComparisonLine:
    """One line under a comparison's heading. ``effect``: for a metric's
    delta, whether its interval excludes 0; None for the other lines."""

    label: str
    text: str
    effect: bool | None = None


def comparison_lines(comparison: Comparison, correctness_label: str) -> list[ComparisonLine]:
    """What both reports show under a comparison: each metric's delta, the
    flips, then the transitions that changed state."""
    lines = [ComparisonLine(metric_label(d.metric, correctness_label), _with_power(d, comparison.n),
                            effect_detected(d)) for d in comparison.deltas]
    if comparison.flips is not None:
        lines.append(ComparisonLine("flips", flips_text(comparison)))
    moved = changed_transitions(comparison)
    if moved:
        lines.append(ComparisonLine("transitions", "; ".join(f"{k}: {v}" for k, v in moved)))
    return lines


def _with_power(delta: Delta, n: int) -> str:
    power = power_text(delta, n)
    return delta_text(delta, n) + (f"; {power}" if power else "")


def source_line(src: ReplaySource) -> str:
    name = PurePath(src.path).name
    tail = f"; an unterminated last line ({src.truncated_tail} bytes) was ignored" \
        if src.truncated_tail else ""
    if src.superseded:
        lines = "line was" if src.superseded == 1 else "lines were"
        tail += (f"; {src.superseded} generation {lines} superseded by a later retry "
                 "and not scored")
    if src.replaced_answers:
        tail += (f" ({src.replaced_answers} of them answers, not errors, replaced by a later line "
                 "for the same generation: a redo after a budget change, or a duplicated line)")
    return (f"{name} (run {src.run_id[:12]}, created {src.created}, conformbench "
            f"{src.conformbench_version}, {counted_text(src)}, sha256 {src.sha256[:16]}…{tail})")


def counted_text(src: ReplaySource) -> str:
    """What a replay holds, each count named (docs/run.md, "What is counted"):
    '18 items×conditions, 30 answers (12 later rounds of multi-round arms;
    6 taken from another arm's identical request)'."""
    if src.units is None:  # a report.json made before units were counted
        return f"{src.generations} answers"
    notes = []
    if src.generations > src.units:
        notes.append(f"{src.generations - src.units} later rounds of multi-round arms")
    if src.shared:
        notes.append(f"{src.shared} taken from another arm's identical request, generated once")
    return (f"{src.units} items×conditions, {src.generations} answers"
            + (f" ({'; '.join(notes)})" if notes else ""))


def facts(info: dict[str, Any], limit: int = 200) -> str:
    """'k=v, ...' of a metadata dict; nested values as compact JSON, cut at
    ``limit`` characters (report.json keeps them whole)."""
    parts = []
    for key, value in info.items():
        if isinstance(value, (str, int, float, bool)) or value is None:
            parts.append(f"{key}={value}")
            continue
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
        if len(text) > limit:
            text = text[:limit] + "… (see report.json)"
        parts.append(f"{key}={text}")
    return ", ".join(parts) or "-"
