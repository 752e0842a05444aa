"""ConCodeEval report sections: the 5 x 3 format grids (format efficacy),
violations per keyword and per position (constraint efficacy), schema
tokens per format. The paper's Table 1 layout across models is in
``concodeeval.compare``."""

from __future__ import annotations

import html
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TypeVar

from pydantic import Field

from conformbench.formats.base import sorted_format_names
from conformbench.records.base import FrozenRecord
from conformbench.records.markdown_escape import md_text
from conformbench.scoring.concodeeval import metrics as cc
from conformbench.scoring.concodeeval.figures import bars, heatmap, markdown_html
from conformbench.scoring.concodeeval.tradeoff import Tradeoff, tradeoff
from conformbench.scoring.percent import pct, pct_bare
from conformbench.scoring.sections import Section, sections
from conformbench.scoring.table import ScoredTable

__all__ = ["GenerationData", "GenerationSection", "ValidationData", "ValidationSection", "n_cut_loop",
           "sorted_formats"]

_POSITIONS = ("begin", "middle", "end", "unknown")
T = TypeVar("T")
#: a grid cell of either section
C = TypeVar("C", cc.GenCell, cc.ValCell)


_Data = FrozenRecord


class GenerationData(_Data):
    cells: list[cc.GenCell]
    keywords: list[cc.Count]
    positions: list[cc.Count]
    tokens: list[cc.TokenStats]
    tradeoff: Tradeoff | None = None
    #: how ``format`` was read (None: not recorded, formats were asserted)
    format_mode: str | None = None


class ValidationData(_Data):
    cells: list[cc.ValCell]
    by_keyword: list[cc.Miss]
    by_position: list[cc.Miss]
    tokens: list[cc.TokenStats]
    tradeoff: Tradeoff | None = None
    format_mode: str | None = None
    #: items whose target under the format mode is not the stored one (a
    #: 'no' sample that breaks only ``format`` is a 'yes' under annotations)
    relabelled: list[str] = Field(default_factory=list)


def sorted_formats(names: Iterable[str]) -> list[str]:
    """Format names in each plugin's table order."""
    return sorted_format_names(names)


def _groups(wheres: Sequence[cc.Cell]) -> list[tuple[int, str]]:
    """(shots, arm) groups in run order."""
    return list(dict.fromkeys((w.shots, w.arm) for w in wheres))


def _grid(
    cells: Sequence[T], where: Callable[[T], cc.Cell], group: tuple[int, str]
) -> tuple[list[str], list[str], dict[tuple[str, str], T]]:
    picked = {(where(c).schema_format, where(c).output_format): c for c in cells
              if (where(c).shots, where(c).arm) == group}
    rows = sorted_formats(k[0] for k in picked)
    cols = sorted_formats(k[1] for k in picked)
    return rows, cols, picked


def _ci(value: float, lo: float | None, hi: float | None) -> str:
    return pct_bare(value) if lo is None or hi is None else f"{pct_bare(value)} [{pct_bare(lo)}, {pct_bare(hi)}]"


def _f1_text(f1: cc.Interval) -> str:
    return f"{f1.value:.2f}" + ("" if f1.lo is None or f1.hi is None else f" [{f1.lo:.2f}, {f1.hi:.2f}]")


def _md_grid(
    cells: Sequence[T], where: Callable[[T], cc.Cell], group: tuple[int, str],
    text: Callable[[T], str], best: Callable[[T], float] | None,
) -> str:
    """Rows schema format, columns output format; the best cell of each row
    (by ``best``) in bold, unless that best is 0 (all cells 0, or a tie at 0)."""
    rows, cols, picked = _grid(cells, where, group)
    lines = ["| schema \\ output | " + " | ".join(map(md_text, cols)) + " |", "|---" * (len(cols) + 1) + "|"]
    for r in rows:
        present = [picked[(r, c)] for c in cols if (r, c) in picked]
        top = max((best(p) for p in present), default=None) if best else None
        out = []
        for c in cols:
            cell = picked.get((r, c))
            shown = "" if cell is None else text(cell)
            # a row whose best is 0 has no best: nothing bold
            out.append(f"**{shown}**" if cell is not None and best and top and best(cell) == top else shown)
        lines.append(f"| {md_text(r)} | " + " | ".join(out) + " |")
    return "\n".join(lines) + "\n"


def _html_grid(
    cells: Sequence[T], where: Callable[[T], cc.Cell], group: tuple[int, str],
    value: Callable[[T], float], title: str,
) -> str:
    rows, cols, picked = _grid(cells, where, group)
    matrix = [[value(picked[(r, c)]) if (r, c) in picked else None for c in cols] for r in rows]
    return heatmap(matrix, rows, cols, title, axes=("output format", "schema format"))


def n_cut_loop(n: int, truncated: int, looped: int) -> str:
    """A cell's "N / cut % / looped %"."""
    if n == 0:
        return "0 / n/a / n/a"
    return f"{n} / {pct(truncated / n)} / {pct(looped / n)}"


_N_TITLE = ("**N / cut at the token budget / ended by the loop stop, {t}** (every cell is over all "
            "items but where a grammar could not compile a schema; see Exclusions)\n\n")


def _cell_counts(counts: Sequence[cc.Count], group: tuple[int, str], cell: str) -> str:
    rows = sorted(((c.label, c.count) for c in counts
                   if (c.where.shots, c.where.arm) == group and c.where.cell == cell),
                  key=lambda kv: (-kv[1], kv[0]))
    if not rows:
        return f"No violations in {md_text(cell)}.\n"
    return "| keyword | violations |\n|---|---|\n" + "".join(f"| {md_text(k)} | {n} |\n" for k, n in rows)


def tradeoff_line(t: Tradeoff | None, metric: str) -> str:
    """The paper's RQ2 sentence, measured."""
    if t is None:
        return ""
    return (f"\n**RQ2 trade-off, {md_text(t.other)} vs {md_text(t.base)} schemas** ({t.shots}-shot "
            f"{md_text(t.arm)}, N={t.n} items): "
            f"{t.other} renderings are {pct(t.token_saving)} shorter (mean {t.schema_tokens_other:.0f} vs "
            f"{t.schema_tokens_base:.0f} rough tokens; {t.prompt_tokens_delta:+.0f} model prompt tokens "
            f"per prompt), at {metric} {pct(t.acc_other)} vs {pct(t.acc_base)}: "
            f"{100 * t.delta:+.1f} pts [{100 * t.ci95[0]:+.1f}, {100 * t.ci95[1]:+.1f}] "
            f"(95% paired {'bootstrap over items' if t.method == 'bootstrap' else 'Newcombe interval'}). "
            "The paper: ~35% fewer tokens, ~14 pts lower Gen Acc, "
            "~4 pts lower Val Acc.\n")


def _group_title(group: tuple[int, str]) -> str:
    return f"{group[0]}-shot, {group[1]}"


def _md_title(group: tuple[int, str]) -> str:
    """``_group_title`` as Markdown text (the arm's key comes from a replay)."""
    return md_text(_group_title(group))


def _sum_by(counts: Iterable[cc.Count], group: tuple[int, str]) -> dict[tuple[str, str], int]:
    """(schema format, label) -> count summed over output formats."""
    out: dict[tuple[str, str], int] = defaultdict(int)
    for c in counts:
        if (c.where.shots, c.where.arm) == group:
            out[(c.where.schema_format, c.label)] += c.count
    return out


def _count_table(counts: Sequence[cc.Count], group: tuple[int, str], labels: Sequence[str] | None) -> str:
    summed = _sum_by(counts, group)
    fmts = sorted_formats(k[0] for k in summed)
    if not fmts:
        return "No violations.\n"
    if labels is None:
        totals: dict[str, int] = defaultdict(int)
        for (_, label), n in summed.items():
            totals[label] += n
        labels = sorted(totals, key=lambda k: (-totals[k], k))
    lines = ["| | " + " | ".join(map(md_text, fmts)) + " |", "|---" * (len(fmts) + 1) + "|"]
    for label in labels:
        lines.append(f"| {md_text(label)} | " + " | ".join(str(summed.get((f, label), 0)) for f in fmts) + " |")
    return "\n".join(lines) + "\n"


def _tokens_md(tokens: Sequence[cc.TokenStats], acc: Mapping[str, float], name: str) -> str:
    lines = [f"| schema format | schemas | max tokens | mean tokens | mean {name} |", "|---|---|---|---|---|"]
    order = sorted_formats(t.schema_format for t in tokens)
    for t in sorted(tokens, key=lambda t: order.index(t.schema_format)):
        shown = pct_bare(acc[t.schema_format]) if t.schema_format in acc else "n/a"
        lines.append(f"| {md_text(t.schema_format)} | {t.schemas} | {t.max_tokens} | {t.mean_tokens:.1f} | {shown} |")
    return "\n".join(lines) + "\n"


def _row_means(cells: Sequence[T], where: Callable[[T], cc.Cell], value: Callable[[T], float]) -> dict[str, float]:
    """Mean over output formats per schema format, first (shots, arm) group."""
    groups = _groups([where(c) for c in cells])
    if not groups:
        return {}
    vals: dict[str, list[float]] = defaultdict(list)
    for c in cells:
        if (where(c).shots, where(c).arm) == groups[0]:
            vals[where(c).schema_format].append(value(c))
    return {k: sum(v) / len(v) for k, v in vals.items()}


def _generation_formats_note(mode: str | None) -> str:
    if mode == "annotate":
        return ("Formats are annotations (JSON Schema 2020-12's default): a sample is not failed for its "
                "`format`, and no `format` violation is counted below; --format-assertion checks them.\n\n")
    if mode == "assert":
        return ("Formats are asserted (--format-assertion): a value outside its `format` is a violation, "
                "counted below.\n\n")
    return ""


def _validation_formats_note(mode: str | None, relabelled: Sequence[str]) -> str:
    if mode == "annotate":
        shown = ", ".join(relabelled[:10]) + (", ..." if len(relabelled) > 10 else "")
        which = f" ({shown})" if relabelled else ""
        return ("Formats are annotations (JSON Schema 2020-12's default): a sample that breaks only `format` "
                f"is valid, so its target is 'yes'; {len(relabelled)} item(s) scored against that rather than "
                f"the dataset's 'no'{which}. --format-assertion keeps the dataset's labels.\n\n")
    if mode == "assert":
        return ("Formats are asserted (--format-assertion): the targets are the dataset's, a sample that "
                "breaks only `format` is a 'no'.\n\n")
    return ""


_TOKENS_NOTE = ("Tokens are a rough count (words and punctuation marks), not a model "
                "tokenizer's; compare formats with each other, not with the paper's numbers.\n")


def _tokens_tail(tokens: Sequence[cc.TokenStats], cells: Sequence[C], value: Callable[[C], float],
                 metric: str, t: Tradeoff | None) -> str:
    """Both sections' closing part: schema tokens per format beside the
    metric's mean per schema format, the note on tokens and the RQ2 line."""
    means = _row_means(cells, lambda c: c.where, value)
    return ("**Schema tokens per format**\n\n" + _tokens_md(tokens, means, f"{metric} %")
            + _TOKENS_NOTE + tradeoff_line(t, metric))


def _html_groups(wheres: Sequence[cc.Cell], figures: Callable[[tuple[int, str], str], list[str]]) -> str:
    """Both sections' figures: per (shots, arm) group a heading and its figures."""
    parts = []
    for g in _groups(wheres):
        t = _group_title(g)
        parts.append(f"<h4>{html.escape(t)}</h4><div>" + "".join(figures(g, t)) + "</div>")
    return "".join(parts)


@sections.register("concodeeval_generation")
class GenerationSection(Section[GenerationData]):
    title = "ConCodeEval: data-as-code generation"
    data_model = GenerationData
    gate_metrics = ("gen_acc", "is_rate", "rtv_rate")
    gate_metrics_need = "the generation task"

    def applies_to(self, task_name: str) -> bool:
        return task_name == "generation"

    def compute(self, table: ScoredTable) -> GenerationData:
        return GenerationData(cells=cc.gen_cells(table), keywords=cc.keyword_counts(table),
                              positions=cc.position_counts(table), tokens=cc.table_token_stats(table),
                              tradeoff=tradeoff(table, lambda r: bool(r.score.correct)),
                              format_mode=table.format_mode)

    def metrics(self, data: GenerationData) -> dict[str, float]:
        return cc.gate_metrics(
            [c.where for c in data.cells],
            [{"gen_acc": c.gen_acc.rate, "is_rate": c.is_rate.rate, "rtv_rate": c.rtv_rate.rate}
             for c in data.cells],
        )

    def markdown(self, data: GenerationData) -> str:
        parts = [_generation_formats_note(data.format_mode)]
        for g in _groups([c.where for c in data.cells]):
            parts.append(f"**Gen Acc % [95% Wilson], {_md_title(g)}** (best per row in bold)\n\n")
            parts.append(_md_grid(data.cells, lambda c: c.where, g,
                                  lambda c: _ci(c.gen_acc.rate, c.gen_acc.lo, c.gen_acc.hi),
                                  lambda c: c.gen_acc.rate))
            parts.append("\n" + _N_TITLE.format(t=_md_title(g)))
            parts.append(_md_grid(data.cells, lambda c: c.where, g,
                                  lambda c: n_cut_loop(c.n, c.truncated, c.looped), None))
            parts.append(f"\n**IS % / RTV % (lower is better), {_md_title(g)}**\n\n")
            parts.append(_md_grid(data.cells, lambda c: c.where, g,
                                  lambda c: f"{pct_bare(c.is_rate.rate)} / {pct_bare(c.rtv_rate.rate)}", None))
            parts.append(f"\n**Violations per keyword, json->json, {_md_title(g)}** (the paper's Table 3: "
                         "one count per violation)\n\n")
            parts.append(_cell_counts(data.keywords, g, "json->json"))
            parts.append(f"\n**Violations per keyword, every output format summed, {_md_title(g)}** "
                         "(columns: schema format)\n\n")
            parts.append(_count_table(data.keywords, g, None))
            parts.append(f"\n**Violations per position in the rendered schema, {_md_title(g)}**\n\n")
            parts.append(_count_table(data.positions, g, _POSITIONS))
            parts.append("\n")
        return "".join(parts) + _tokens_tail(data.tokens, data.cells, lambda c: c.gen_acc.rate,
                                             "Gen Acc", data.tradeoff)

    def html(self, data: GenerationData) -> str:
        def figures(g: tuple[int, str], t: str) -> list[str]:
            grids = [_html_grid(data.cells, lambda c: c.where, g, get, f"{label}, {t}")
                     for label, get in (("Gen Acc %", lambda c: c.gen_acc.rate),
                                        ("IS %", lambda c: c.is_rate.rate), ("RTV %", lambda c: c.rtv_rate.rate))]
            return [*grids, _position_heatmap(data.positions, g, t), _keyword_bars(data.keywords, g, t)]

        return _html_groups([c.where for c in data.cells], figures) + markdown_html(self.markdown(data))


def _position_heatmap(counts: Sequence[cc.Count], group: tuple[int, str], title: str) -> str:
    summed = _sum_by(counts, group)
    fmts = sorted_formats(k[0] for k in summed)
    if not fmts:
        return "<p>No violations.</p>"
    matrix: list[list[float | None]] = [[float(summed.get((f, p), 0)) for p in _POSITIONS[:3]] for f in fmts]
    return heatmap(matrix, fmts, _POSITIONS[:3], f"Violations by position, {title}", percent=False,
                   cmap="Reds", axes=("position in the rendered schema", "schema format"))


def _keyword_bars(counts: Sequence[cc.Count], group: tuple[int, str], title: str) -> str:
    totals: dict[str, int] = defaultdict(int)
    for (_, label), n in _sum_by(counts, group).items():
        totals[label] += n
    if not totals:
        return "<p>No violations.</p>"
    ranked = sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))[:20]
    return bars([k for k, _ in ranked], [float(v) for _, v in ranked], f"Violations per keyword, {title}")


def _miss_table(misses: Sequence[cc.Miss], group: tuple[int, str]) -> str:
    """Rows: label; columns: schema format; cells 'missed/total'."""
    summed: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for m in misses:
        if (m.where.shots, m.where.arm) == group:
            summed[(m.where.schema_format, m.label)][0] += m.missed
            summed[(m.where.schema_format, m.label)][1] += m.total
    fmts = sorted_formats(k[0] for k in summed)
    if not fmts:
        return "No invalid samples.\n"
    labels = sorted({k[1] for k in summed})
    lines = ["| | " + " | ".join(map(md_text, fmts)) + " |", "|---" * (len(fmts) + 1) + "|"]
    for label in labels:
        row = [f"{summed[(f, label)][0]}/{summed[(f, label)][1]}" if (f, label) in summed else ""
               for f in fmts]
        lines.append(f"| {md_text(label)} | " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


@sections.register("concodeeval_validation")
class ValidationSection(Section[ValidationData]):
    title = "ConCodeEval: DSL validation"
    data_model = ValidationData
    gate_metrics = ("val_acc", "val_f1")
    gate_metrics_need = "the validation task"

    def applies_to(self, task_name: str) -> bool:
        return task_name == "validation"

    def compute(self, table: ScoredTable) -> ValidationData:
        relabelled = dict.fromkeys(r.item_id for r in table.rows if r.score.label != r.item.target)
        return ValidationData(cells=cc.val_cells(table), by_keyword=cc.miss_by_violation(table, "keyword"),
                              by_position=cc.miss_by_violation(table, "position"),
                              tokens=cc.table_token_stats(table),
                              tradeoff=tradeoff(table, lambda r: bool(r.score.correct)),
                              format_mode=table.format_mode, relabelled=list(relabelled))

    def metrics(self, data: ValidationData) -> dict[str, float]:
        return cc.gate_metrics([c.where for c in data.cells],
                               [{"val_acc": c.val_acc.value, "val_f1": c.val_f1.value} for c in data.cells])

    def markdown(self, data: ValidationData) -> str:
        parts = [_validation_formats_note(data.format_mode, data.relabelled)]
        for g in _groups([c.where for c in data.cells]):
            t = _md_title(g)
            parts.append(f"**Val Acc % [95% Wilson], {t}** (best per row in bold)\n\n")
            parts.append(_md_grid(data.cells, lambda c: c.where, g,
                                  lambda c: _ci(c.val_acc.value, c.val_acc.lo, c.val_acc.hi),
                                  lambda c: c.val_acc.value))
            parts.append("\n" + _N_TITLE.format(t=t))
            parts.append(_md_grid(data.cells, lambda c: c.where, g,
                                  lambda c: n_cut_loop(c.n, c.truncated, c.looped), None))
            parts.append(f"\n**Macro-F1 [95% bootstrap from N = 30; below, no interval], {t}**\n\n")
            parts.append(_md_grid(data.cells, lambda c: c.where, g, lambda c: _f1_text(c.val_f1),
                                  lambda c: c.val_f1.value))
            parts.append(f"\n**Answers: yes / no / unparseable, {t}**\n\n")
            parts.append(_md_grid(data.cells, lambda c: c.where, g,
                                  lambda c: f"{c.predicted_yes} / {c.predicted_no} / {c.unparseable}", None))
            parts.append(f"\n**Missed violations (answered not 'no') per keyword, {t}**\n\n")
            parts.append(_miss_table(data.by_keyword, g))
            parts.append(f"\n**Missed violations per position of the violated keyword, {t}**\n\n")
            parts.append(_miss_table(data.by_position, g) + "\n")
        return "".join(parts) + _tokens_tail(data.tokens, data.cells, lambda c: c.val_acc.value,
                                             "Val Acc", data.tradeoff)

    def html(self, data: ValidationData) -> str:
        def figures(g: tuple[int, str], t: str) -> list[str]:
            return [_html_grid(data.cells, lambda c: c.where, g, lambda c: c.val_acc.value, f"Val Acc %, {t}"),
                    _html_grid(data.cells, lambda c: c.where, g, lambda c: c.val_f1.value, f"Macro-F1 x100, {t}")]

        return _html_groups([c.where for c in data.cells], figures) + markdown_html(self.markdown(data))
