"""The ConCodeEval attention section (the paper's Figure 2): where the
answer position looks in the schema, from a ``--attention`` run's records.
Shown only for tables that hold attention records; what each number is:
``attention_data``'s docstring and docs/concodeeval.md."""

from __future__ import annotations

from conformbench.records.attention_record import PROFILE_BINS
from conformbench.scoring.concodeeval.attention_data import (
    MEAN_INTERVAL_MIN_N,
    SEGMENTS,
    AttentionData,
    KeywordRow,
    Mean,
    Profile,
    attention_data,
)
from conformbench.scoring.concodeeval.figures import heatmap, markdown_html
from conformbench.scoring.concodeeval.metrics import Rate
from conformbench.scoring.percent import pct_bare
from conformbench.scoring.sections import Section, md_text, sections
from conformbench.scoring.table import ScoredTable

__all__ = ["AttentionSection"]

_BINS = [f"{10 * i}-{10 * (i + 1)}%" for i in range(PROFILE_BINS)]


def _mean_text(m: Mean) -> str:
    if m.n == 0:
        return "n/a"
    if m.lo is None or m.hi is None:
        return pct_bare(m.mean)
    return f"{pct_bare(m.mean)} [{pct_bare(m.lo)}, {pct_bare(m.hi)}]"


def _rate_text(r: Rate) -> str:
    return "n/a (no items)" if r.n == 0 else f"{r.k}/{r.n} = {pct_bare(r.rate)} [{pct_bare(r.lo)}, {pct_bare(r.hi)}]"


def _profile_title(p: Profile) -> str:
    return (f"{p.schema_format} schemas, {p.shots}-shot {p.arm} ({p.generations} generations, {p.items} items"
            + (f"; {p.short} with fewer than {PROFILE_BINS} schema tokens left out" if p.short else "") + ")")


def _profile_md(p: Profile) -> str:
    lines = [f"**Share of the schema's attention per slice of the schema, % by layer: {md_text(_profile_title(p))}**",
             "", "| layer | " + " | ".join(_BINS) + " |", "|---" * (PROFILE_BINS + 1) + "|"]
    lines += [f"| {n} | " + " | ".join(pct_bare(x) for x in row) + " |" for n, row in enumerate(p.shares)]
    return "\n".join(lines) + "\n"


def _segments_md(data: AttentionData) -> str:
    note = (f"intervals: 95% percentile bootstrap over items, from N={MEAN_INTERVAL_MIN_N}; below, the mean "
            "alone")
    lines = ["**Begin / middle / end share of the schema's attention, % (mean over layers, then items; "
             f"{note})**", "",
             "| condition | N | begin | middle | end | token share begin / middle / end | schema's share of all "
             "attention | layers |", "|---|---|---|---|---|---|---|---|"]
    for r in data.segments:
        tokens = " / ".join(pct_bare(x) for x in r.tokens)
        lines.append(f"| {md_text(r.where.key)} | {r.schema_attention.n} | " + " | ".join(_mean_text(m) for m in r.shares)
                     + f" | {tokens} | {_mean_text(r.schema_attention)} | {r.layers} |")
    return "\n".join(lines) + "\n"


def _keyword_md(rows: list[KeywordRow]) -> str:
    lines = ["**Attention on the segment holding the violated keyword vs a wrong verdict** ('no' items with "
             "one violation located in a segment; lift = the segment's share of the schema's attention / its "
             "share of the schema's tokens; items split at the condition's median lift; wrong = not answered "
             "'no'; rates with 95% Wilson intervals)", "",
             "| condition | 'no' items | located (begin / middle / end) | median lift | wrong, lift below median "
             "| wrong, lift at or above | mean lift, wrong | mean lift, right |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        seg = " / ".join(str(r.by_segment.get(s, 0)) for s in SEGMENTS)
        lines.append(f"| {md_text(r.where.key)} | {r.no_items} | {r.located} ({seg}) | {r.median_lift:.2f} | "
                     f"{_rate_text(r.low)} | {_rate_text(r.high)} | {_lift_text(r.lift_wrong)} | "
                     f"{_lift_text(r.lift_right)} |")
    return "\n".join(lines) + "\n" + _keyword_note(rows)


def _lift_text(m: Mean) -> str:
    if m.n == 0:
        return "n/a (N=0)"
    interval = "" if m.lo is None or m.hi is None else f" [{m.lo:.2f}, {m.hi:.2f}]"
    return f"{m.mean:.2f}{interval} (N={m.n})"


def _keyword_note(rows: list[KeywordRow]) -> str:
    apart = [r.where.key for r in rows if r.low.n and r.high.n and (r.low.hi < r.high.lo or r.high.hi < r.low.lo)]
    if apart:
        return "\nThe two halves' intervals do not overlap in: " + ", ".join(md_text(k) for k in apart) + ".\n"
    return ("\nThe two halves' intervals overlap in every condition: at these N no relation between the "
            "attention on the violated keyword's segment and a wrong verdict is shown (which is not evidence "
            "that there is none).\n")


@sections.register("concodeeval_attention")
class AttentionSection(Section[AttentionData]):
    title = "ConCodeEval: attention on the schema (paper Figure 2)"
    data_model = AttentionData

    def applies_to(self, task_name: str) -> bool:
        return task_name in ("generation", "validation")

    def compute(self, table: ScoredTable) -> AttentionData | None:
        return attention_data(table)

    def markdown(self, data: AttentionData) -> str:
        parts = ["Attention of the answer position (the prompt's last token, whose logits choose the first "
                 "answer token), mean over heads, per layer; shares are of the schema's attention, so a part "
                 "under attention proportional to its tokens gets its token share."
                 + (f" {data.without} generation(s) have no attention record." if data.without else ""), "",
                 _segments_md(data)]
        if data.keyword:
            parts += ["", _keyword_md(data.keyword)]
        elif data.task == "validation":
            parts += ["", "No 'no' item has one violation located in a segment of its schema format.\n"]
        for p in data.profiles:
            parts += ["", _profile_md(p)]
        return "\n".join(parts)

    def html(self, data: AttentionData) -> str:
        figures = []
        for p in data.profiles:
            values = [[round(100 * x, 1) for x in row] for row in p.shares]
            figures.append(heatmap(values, [str(n) for n in range(len(values))], _BINS,
                                   f"Share of the schema's attention (%), {_profile_title(p)}", percent=False,
                                   cmap="magma", axes=("slice of the schema's tokens", "layer")))
        return (f"<div>{''.join(figures)}</div>" if figures else "") + markdown_html(self.markdown(data))

    def terminal(self, data: AttentionData) -> list[str]:
        out = []
        for r in data.segments:
            shares = " / ".join(pct_bare(m.mean) for m in r.shares)
            tokens = " / ".join(pct_bare(x) for x in r.tokens)
            out.append(f"  attention, {data.task} {r.where.key}: begin / middle / end {shares}% of the schema's "
                       f"attention (tokens {tokens}%; N={r.schema_attention.n})")
        return out
