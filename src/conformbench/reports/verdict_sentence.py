"""One comparison of the verdict in one sentence: the words the terminal,
report.md and report.html all print (``comparison_sentence``, the one
function that writes them), e.g.

    the grammar (prompt_only[answer] → constrained[answer]@llguidance) on 4
    items: raised schema validity by 100.0 points [+14.5, +100.0], not
    established (only 4 item(s) changed, and the exact test cannot reject with
    fewer than 6); no detectable change in answer accuracy (+0.0 [-54.0,
    +54.0]); to tell a 10-point difference from chance this run would need
    about 78 items for schema validity and about 329 items for answer
    accuracy; it has 4.

Above each sentence, one headline line (``headline``): the comparison's
first verdict metric as a number with its interval and one word, e.g.

    the grammar (prompt_only[answer] → constrained[answer]@llguidance):
    schema validity +100.0 points [+14.5, +100.0], too few items

Each metric gets one of three calls (docs/statistics.md, "The verdict"):
**detected** (the paired interval excludes 0 and the exact McNemar test
rejects), **not established** (the interval excludes 0, the exact test does
not reject: too few items changed, or p >= 0.05) or **no detectable change**
(the interval includes 0). A detected effect whose interval is wider than
+/- the asked difference (--detect, 10 points by default) is "detected but
too few items to size it". For the metrics with nothing detected the
sentence ends with the items the asked difference needs (per metric: it
depends on how many items changed) beside the items the run has, or that N
is enough. The headline's word: **likely real** (detected), **too few items**
(nothing detected, and fewer items than the asked difference needs) or **not
established** (nothing detected with enough items, or an interval that
excludes 0 where the exact test does not reject)."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Literal

from conformbench.records.results import Comparison, Delta
from conformbench.reports.text import effect_call, metric_label, underpowered
from conformbench.scoring.intervals import exact_test_note

__all__ = ["HEADLINE_WORDS", "VERDICT_METRICS", "comparison_sentence", "headline", "headline_word", "short_of",
           "unsized", "verdict_deltas"]

#: what the verdict reports of each comparison, in order
VERDICT_METRICS = ("validity", "accuracy", "wrong_but_valid")

#: the headline's word on its number (``headline_word``)
HEADLINE_WORDS = ("likely real", "not established", "too few items")


def verdict_deltas(comp: Comparison, hidden: Collection[str] = ()) -> list[Delta]:
    """The verdict metrics' deltas in VERDICT_METRICS order, less ``hidden``."""
    by_metric = {d.metric: d for d in comp.deltas}
    return [by_metric[m] for m in VERDICT_METRICS if m in by_metric and m not in hidden]


def short_of(delta: Delta, n: int) -> bool:
    """No effect detected, and fewer items than the asked difference needs
    (``text.underpowered``): the null says little."""
    return underpowered(delta, n)


def unsized(delta: Delta) -> bool:
    """A detected effect whose interval is wider than +/- the asked
    difference (--detect): real, but too few items to say how large."""
    lo, hi = delta.ci95
    return delta.detect is not None and (hi - lo) / 2 > delta.detect


def _subject(comp: Comparison) -> str:
    if comp.role == "headline":
        return f"the grammar ({comp.from_key} → {comp.to_key})"
    return f"{comp.to_key} against {comp.from_key}"


def _interval(d: Delta) -> str:
    lo, hi = d.ci95
    return f"[{100 * lo:+.1f}, {100 * hi:+.1f}]"


def _moved(same: list[Delta], label: str) -> str:
    d = same[0]
    verb = "raised" if d.delta > 0 else "lowered" if d.delta < 0 else "moved"
    names = _listed([metric_label(m.metric, label) for m in same])
    return f"{verb} {names} by {100 * abs(d.delta):.1f} points {_interval(d)}"


def _clause(same: list[Delta], label: str) -> str:
    """Metrics whose interval excludes 0 and that moved alike (generation's
    accuracy is its validity): detected, or not established and why."""
    d = same[0]
    if effect_call(d) == "detected":
        return _moved(same, label) + (", detected but too few items to size it" if unsized(d) else ", detected")
    return _moved(same, label) + f", not established ({exact_test_note(d.excludes_0, d.discordant, d.mcnemar_p)})"


def _alike(deltas: list[Delta]) -> list[list[Delta]]:
    """Deltas grouped when they read the same (the same call, size, interval
    and discordance), in order."""
    groups: dict[tuple[object, ...], list[Delta]] = {}
    for d in deltas:
        key = (effect_call(d), round(d.delta, 9), round(d.ci95[0], 9), round(d.ci95[1], 9), d.discordant)
        groups.setdefault(key, []).append(d)
    return list(groups.values())


def _listed(parts: list[str], word: str = "and") -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + f" {word} {parts[-1]}"


def _nulls(deltas: list[Delta], label: str) -> str:
    shown = [f"{metric_label(d.metric, label)} ({100 * d.delta:+.1f} {_interval(d)})" for d in deltas]
    return "no detectable change in " + _listed(shown, "or")


def _sizing(deltas: list[Delta], n: int, label: str) -> str:
    """For the metrics with no effect detected: what N the asked difference
    needs, per metric short of it, or that N is enough ('' when every
    metric's effect is detected, or the report predates --detect)."""
    asked = [d for d in deltas if d.detect is not None and effect_call(d) != "detected"]
    if not asked:
        return ""
    points = f"{100 * (asked[0].detect or 0):g}-point"
    short = [d for d in asked if short_of(d, n)]
    if not short:
        return f"its {n} items are enough to tell a {points} difference from chance"
    needs: dict[int | None, list[str]] = {}
    for d in short:
        needs.setdefault(d.n_needed, []).append(metric_label(d.metric, label))
    return f"to tell a {points} difference from chance this run would need " + _listed(
        [f"{_items(count)} for {_listed(names)}" for count, names in needs.items()]) + f"; it has {n}"


def _items(count: int | None) -> str:
    return "more than a million items" if count is None else f"about {count} items"


def _calls(deltas: Iterable[Delta], call: Literal["detected", "not established", "none"]) -> list[Delta]:
    return [d for d in deltas if effect_call(d) == call]


def comparison_sentence(comp: Comparison, label: str, hidden: Collection[str] = ()) -> str:
    """The comparison in one sentence (``label``: the task's correctness
    label; ``hidden``: metrics left out, those no condition measures)."""
    deltas = verdict_deltas(comp, hidden)
    head = f"{_subject(comp)} on {comp.n} items"
    if not deltas:
        return f"{head}: no verdict metric both conditions measure."
    clauses = [_clause(same, label) for same in _alike([d for d in deltas if effect_call(d) != "none"])]
    nulls = _calls(deltas, "none")
    if nulls:
        clauses.append(_nulls(nulls, label))
    sizing = _sizing(deltas, comp.n, label)
    return f"{head}: " + "; ".join(clauses + ([sizing] if sizing else [])) + "."


def headline_word(delta: Delta, n: int) -> str:
    """One of ``HEADLINE_WORDS`` for ``delta`` over ``n`` items."""
    if effect_call(delta) == "detected":
        return "likely real"
    return "too few items" if underpowered(delta, n) else "not established"


def headline(comp: Comparison, label: str, hidden: Collection[str] = ()) -> str:
    """The comparison's headline: its first verdict metric as a number with
    its interval and a word (``headline_word``), e.g. 'the grammar (A → B):
    schema validity +100.0 points [+14.5, +100.0], too few items'."""
    deltas = verdict_deltas(comp, hidden)
    if not deltas:
        return f"{_subject(comp)}: no verdict metric both conditions measure"
    d = deltas[0]
    return (f"{_subject(comp)}: {metric_label(d.metric, label)} {100 * d.delta:+.1f} points {_interval(d)}, "
            f"{headline_word(d, comp.n)}")
