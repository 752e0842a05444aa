"""The report section of a run with a multi-round arm (repair, resample,
fallback): what each arm costs (scoring/cost.py), validity by round, and a
chart of accuracy against mean calls, one point per arm with its
intervals. Its gate metrics let ``--fail-if`` check cost:
``mean_calls[repair*] > 2``."""

from __future__ import annotations

from conformbench.records.markdown_escape import md_code
from conformbench.records.results import Rate
from conformbench.scoring.concodeeval.figures import markdown_html
from conformbench.scoring.cost import ArmCost, CostData, cost_data
from conformbench.scoring.percent import rate_ci
from conformbench.scoring.sections import Section, sections
from conformbench.scoring.table import ScoredTable

__all__ = ["CostSection", "cost_chart"]


def _pct(rate: Rate | None) -> str:
    if rate is None:
        return "n/a"
    return rate_ci(rate.rate, rate.ci95)


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3g}" if abs(x) < 100 else f"{x:.0f}"


#: under a cost table where some arm's free step's cost is unknown ("n/a")
UNKNOWN_STEP_NOTE = ("free turn's tokens and seconds not recorded in this replay (made before conformbench "
                     "recorded them); rerun to measure")


def _notes(data: CostData) -> list[str]:
    """The lines under the cost table: which arms' figures are n/a and
    why, and how many free steps were cut at their budget."""
    notes = []
    unknown = [f"{md_code(a.key)} ({a.unknown_step_costs} of {a.n} items)" for a in data.arms
               if a.unknown_step_costs]
    if unknown:
        notes.append(f"n/a: {UNKNOWN_STEP_NOTE}: {', '.join(unknown)}.")
    cut = [f"{md_code(a.key)} {a.steps_cut} of {a.n}" for a in data.arms if a.steps_cut]
    if cut:
        notes.append(f"Free turns cut at their budget or in a loop (the packaged answer's cause): {', '.join(cut)}.")
    return notes


def _cost_rows(data: CostData) -> list[str]:
    head = ["arm", "N", "calls/item [95% CI]", "rounds/item", "prompt tokens/item", "generated tokens/item",
            "seconds/item", "shared calls", "calls per valid", "calls per right", "tokens per right",
            "seconds per right"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for a in data.arms:
        lo, hi = a.calls_ci95
        cells = [f"{md_code(a.key)}", str(a.n), f"{a.calls:.2f} [{lo:.2f}, {hi:.2f}]", f"{a.rounds:.2f}",
                 _num(a.prompt_tokens), _num(a.completion_tokens), _num(a.seconds), str(a.shared_calls),
                 _num(a.calls_per_valid), _num(a.calls_per_right), _num(a.tokens_per_right),
                 _num(a.seconds_per_right)]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _round_rows(data: CostData) -> list[str]:
    lines = ["| arm | after round | answered in it | validity [95% Wilson] | accuracy [95% Wilson] "
             "| wrong-but-valid [95% Wilson] | unparsed (IS) | wrong root type (RTV) |", "|---|---|---|---|---|---|---|---|"]
    for a in data.arms:
        if len(a.by_round) < 2:
            continue
        for r in a.by_round:
            lines.append(f"| {md_code(a.key)} | {r.round + 1} | {r.answered} | {_pct(r.validity)} | "
                         f"{_pct(r.accuracy)} | {_pct(r.wrong_but_valid)} | {_pct(r.unparsed)} | "
                         f"{_pct(r.root_type_wrong)} |")
    return lines


def label_lifts(points: list[tuple[float, float]]) -> list[int]:
    """Each label's height above its point, in points: arms at (nearly) one
    spot (calls within 0.15, accuracy within 4 points) get their labels one
    line apart, never on top of each other (issue #48: ``prompt_only[answer]``
    and ``constrained[answer]@llguidance`` both at (1.00, 0))."""
    lifts = []
    for i, (x, y) in enumerate(points):
        near = sum(abs(px - x) < 0.15 and abs(py - y) < 4.0 for px, py in points[:i])
        lifts.append(4 + 9 * near)
    return lifts


def cost_chart(arms_: list[ArmCost]) -> str:
    """Accuracy against mean calls per item, one point per arm, with the
    accuracy's Wilson and the calls' normal 95% intervals (an <img> tag)."""
    from conformbench.scoring.concodeeval.figures import _img, _subplots

    fig, ax = _subplots((6.0, 4.0))
    lifts = iter(label_lifts([(a.calls, 100 * a.accuracy.rate) for a in arms_ if a.accuracy is not None]))
    for a in arms_:
        if a.accuracy is None:
            continue
        acc, (lo, hi) = 100 * a.accuracy.rate, a.accuracy.ci95
        clo, chi = a.calls_ci95
        # max(0, ...): an interval's end equal to the point can round past it
        ax.errorbar([a.calls], [acc], xerr=[[max(0.0, a.calls - clo)], [max(0.0, chi - a.calls)]],
                    yerr=[[max(0.0, acc - 100 * lo)], [max(0.0, 100 * hi - acc)]], fmt="o", capsize=3)
        ax.annotate(a.key, (a.calls, acc), fontsize=7, xytext=(4, next(lifts)), textcoords="offset points")
    ax.set_xlabel("model calls per item (mean)", fontsize=9)
    ax.set_ylabel("accuracy %", fontsize=9)
    ax.set_title("Accuracy against cost, one point per arm (95% intervals)", fontsize=10)
    return _img(fig, "accuracy against model calls per arm")


@sections.register("cost")
class CostSection(Section[CostData]):
    title = "Cost: calls, tokens and seconds per arm, and validity by round"
    data_model = CostData
    gate_metrics = ("mean_calls", "mean_rounds", "mean_prompt_tokens", "mean_completion_tokens",
                    "mean_seconds")

    def applies_to(self, task_name: str) -> bool:
        return True

    def compute(self, table: ScoredTable) -> CostData | None:
        return cost_data(table)

    def metrics(self, data: CostData) -> dict[str, float]:
        out: dict[str, float] = {}
        for a in data.arms:  # a cost not known (n/a) is never a 0: it is in unmeasured()
            out[f"mean_calls[{a.key}]"] = a.calls
            out[f"mean_rounds[{a.key}]"] = a.rounds
            for name, value in (("mean_prompt_tokens", a.prompt_tokens),
                                ("mean_completion_tokens", a.completion_tokens), ("mean_seconds", a.seconds)):
                if value is not None:
                    out[f"{name}[{a.key}]"] = value
        return out

    def unmeasured(self, data: CostData) -> dict[str, str]:
        out: dict[str, str] = {}
        for a in data.arms:
            why = (f"{a.unknown_step_costs} of {a.n} items' free-turn cost not recorded in this replay; "
                   "rerun to measure")
            for name, value in (("mean_prompt_tokens", a.prompt_tokens),
                                ("mean_completion_tokens", a.completion_tokens), ("mean_seconds", a.seconds)):
                if value is None:
                    out[f"{name}[{a.key}]"] = why
        return out

    def terminal(self, data: CostData) -> list[str]:
        lines = ["cost per item (means; report.md: per valid and per right answer, validity by round)"]
        for a in data.arms:
            last = a.by_round[-1] if a.by_round else None
            rates = "" if last is None else (f"validity {_pct(last.validity)}, accuracy {_pct(last.accuracy)}, "
                                             f"wrong-but-valid {_pct(last.wrong_but_valid)}, ")
            tokens = ("tokens n/a, seconds n/a (free turn's cost not recorded; rerun to measure)"
                      if a.prompt_tokens is None or a.completion_tokens is None or a.seconds is None else
                      f"tokens {a.prompt_tokens:.0f} in / {a.completion_tokens:.0f} out, {a.seconds:.2f} s")
            cut = f", free turns cut {a.steps_cut}" if a.steps_cut else ""
            lines.append(f"  {a.key} (N={a.n}): {rates}mean calls {a.calls:.2f}, rounds {a.rounds:.2f}, "
                         f"{tokens}{cut}")
        return lines

    def markdown(self, data: CostData) -> str:
        intro = ("Means per item over all N items of each arm. A call another arm's identical turn generated "
                 "is counted for both (the cost of running the arm alone); 'shared calls' says how many the "
                 "run made once. Per valid / per right: totals over the arm's items divided by its valid / "
                 "right answers. Calls' interval: normal approximation.")
        rounds = _round_rows(data)
        parts = [intro, "", *_cost_rows(data)]
        for note in _notes(data):
            parts += ["", note]
        if len(rounds) > 2:
            parts += ["", "**Rates after each round** (an item whose arm stopped keeps its last answer)", "",
                      *rounds]
        return "\n".join(parts) + "\n"

    def html(self, data: CostData) -> str:
        # the tables scroll inside their own box at 1280 px, never the page
        tables = markdown_html(self.markdown(data))
        tables = tables.replace("<table", '<div class="wide"><table').replace("</table>", "</table></div>")
        return tables + cost_chart(data.arms)
