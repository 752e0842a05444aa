"""The report section of a run with ``[decoding] samples`` = K > 1: per
condition the mean over samples, pass@k, all@k and per-item agreement, and
the grammar's paired difference over samples (scoring/sample_metrics.py). It is
in a report only when K > 1: a single-sample report is what it was."""

from __future__ import annotations

from conformbench.scoring.concodeeval.figures import markdown_html
from conformbench.scoring.percent import pct, pts, rate_ci
from conformbench.scoring.sample_metrics import METRICS, SampledRate, SamplingData, sample_count, sampling_data
from conformbench.scoring.sections import Section, md_text, sections
from conformbench.scoring.table import ScoredTable

__all__ = ["FEW_ITEMS", "SamplingSection", "rate_text", "reading"]

#: kept for callers: the paired rule itself decides the method (stats.paired_method)
FEW_ITEMS = 30


def rate_text(rate: SampledRate) -> str:
    return rate_ci(rate.rate, rate.ci95)


def _rows(data: SamplingData) -> list[str]:
    k = data.samples
    head = ["condition", "metric", "N items", "mean over samples [95% CI]",
            *(f"pass@{j}" for j in range(2, k + 1)), *(f"all@{j}" for j in range(2, k + 1)),
            f"all {k} agree [95% CI]", "pairwise agreement"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for cond in data.conditions:
        for m in cond.metrics:
            cells = [md_text(cond.key), m.metric, str(cond.n), rate_text(m.mean),
                     *(rate_text(r) for r in m.pass_at[1:]), *(rate_text(r) for r in m.all_at[1:]),
                     rate_text(m.agreement), pct(m.pairwise_agreement)]
            lines.append("| " + " | ".join(cells) + " |")
    return lines


def _deltas(data: SamplingData) -> list[str]:
    if not data.comparisons:
        return ["No paired grammar comparison (no prompt_only/constrained pair in this task)."]
    lines = []
    for d in data.comparisons:
        lo, hi = d.ci95
        lines.append(f"- {md_text(d.from_key)} → {md_text(d.to_key)}, {d.metric}: {pts(d.delta)} pts "
                     f"[{pts(lo)}, {pts(hi)}] over N={d.n} items × {data.samples} samples "
                     f"({reading(d.n, lo, hi, d.method)})")
    return lines


def reading(n: int, lo: float, hi: float, method: str = "newcombe") -> str:
    """What a paired interval over ``n`` items says (``method``: how it was made)."""
    how = "paired bootstrap" if method == "bootstrap" else "Newcombe"
    return f"{how}; " + ("excludes 0" if lo > 0 or hi < 0 else f"no detectable effect at N={n}")


@sections.register("sampling")
class SamplingSection(Section[SamplingData]):
    title = "Sampling: pass@k, all@k and per-item agreement"
    data_model = SamplingData
    #: at k = K, per condition key: ``pass_at_k_validity[constrained*] < 0.9``
    gate_metrics = tuple(f"{kind}_{metric}" for kind in ("pass_at_k", "all_at_k", "agreement")
                         for metric in ("validity", "accuracy"))

    def applies_to(self, task_name: str) -> bool:
        return True

    gate_metrics_need = "--samples K > 1 (and --temperature > 0)"

    def planned_metrics(self, task_name: str, samples: int) -> tuple[str, ...]:
        return self.gate_metrics if samples > 1 else ()  # one sample per item: nothing over samples

    def compute(self, table: ScoredTable) -> SamplingData | None:
        return sampling_data(table) if sample_count(table) > 1 else None

    def metrics(self, data: SamplingData) -> dict[str, float]:
        out: dict[str, float] = {}
        for cond in data.conditions:
            for m in cond.metrics:
                out[f"pass_at_k_{m.metric}[{cond.key}]"] = m.pass_at[-1].rate
                out[f"all_at_k_{m.metric}[{cond.key}]"] = m.all_at[-1].rate
                out[f"agreement_{m.metric}[{cond.key}]"] = m.agreement.rate
        return out

    def unmeasured(self, data: SamplingData) -> dict[str, str]:
        """A condition's metric no sample has a verdict on (validity of a
        condition with no contract): n/a, for a gate too."""
        out: dict[str, str] = {}
        for cond in data.conditions:
            have = {m.metric for m in cond.metrics}
            for metric in METRICS:
                if metric not in have:
                    why = (f"no sample of it has a {metric} verdict"
                           + (" (a condition with no contract has no validity)" if metric == "validity" else ""))
                    out |= {f"{kind}_{metric}[{cond.key}]": why for kind in ("pass_at_k", "all_at_k", "agreement")}
        return out

    def terminal(self, data: SamplingData) -> list[str]:
        """Per condition, each metric's pass@K, all@K and agreement."""
        k = data.samples
        lines = [f"sampling: {k} samples per item and condition (report.md: pass@k and all@k for every k)"]
        for cond in data.conditions:
            for m in cond.metrics:
                lines.append(f"  {cond.key}: {m.metric} mean {rate_text(m.mean)}, pass@{k} "
                             f"{pct(m.pass_at[-1].rate)}, all@{k} {pct(m.all_at[-1].rate)}, all {k} agree on "
                             f"{pct(m.agreement.rate)} of N={cond.n} items")
        for d in data.comparisons:
            lines.append(f"  {d.from_key} -> {d.to_key}: {d.metric} over samples {pts(d.delta)} pts "
                         f"[{pts(d.ci95[0])}, {pts(d.ci95[1])}] ({reading(d.n, *d.ci95, d.method)})")
        return lines

    def markdown(self, data: SamplingData) -> str:
        intro = (f"{data.samples} samples per item and condition (sample s decoded with the run's seed + s). "
                 "Every other table of this report is over sample 0 (the ledger lists every sample). pass@k and all@k: the chance that at "
                 f"least one / all of k of an item's {data.samples} samples pass (unbiased estimator, Chen et "
                 "al. 2021), averaged over items; intervals over items, each item keeping all its samples: "
                 "95% Wilson over the N items for a share (conservative for an item's share of its samples), "
                 "the paired rule of every comparison for a difference (docs/statistics.md).")
        return "\n".join([intro, "", *_rows(data), "", "**The grammar over samples** (the difference of per-item "
                          "means, items as clusters)", "", *_deltas(data)]) + "\n"

    def html(self, data: SamplingData) -> str:
        return markdown_html(self.markdown(data))
