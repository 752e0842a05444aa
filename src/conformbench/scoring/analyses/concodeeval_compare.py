"""ConCodeEval across models: the paper's Table 1 layout (rows schema
format x model, columns output format x {Gen Acc, Val Acc}) and Figure 1's
position heatmap (models x begin/middle/end), from a whole ScoredRun.

Report writers call ``run_comparison_markdown`` / ``run_comparison_html``
once per run (None when the run has no ConCodeEval results).
"""

from __future__ import annotations

import html
from collections import defaultdict
from collections.abc import Mapping, Sequence

from conformbench.scoring import concodeeval as cc
from conformbench.scoring.analyses.concodeeval import (
    GenerationData,
    GenerationSection,
    ValidationData,
    ValidationSection,
    pct,
    sorted_formats,
)
from conformbench.scoring.analyses.concodeeval_plots import heatmap, markdown_html
from conformbench.scoring.results import ScoredRun

__all__ = [
    "format_efficacy_markdown",
    "positions_by_model",
    "run_comparison_html",
    "run_comparison_markdown",
]

_POSITIONS = ("begin", "middle", "end")
TITLE = "ConCodeEval across models (format efficacy, paper Table 1 layout)"


def _collect(run: ScoredRun) -> tuple[dict[str, GenerationData], dict[str, ValidationData]]:
    gen: dict[str, GenerationData] = {}
    val: dict[str, ValidationData] = {}
    for result in run.results:
        for section in result.sections:
            if section.name == GenerationSection.name:
                gen[result.model] = GenerationSection().load(section.data)
            elif section.name == ValidationSection.name:
                val[result.model] = ValidationSection().load(section.data)
    return gen, val


def _shots(gen: Mapping[str, GenerationData], val: Mapping[str, ValidationData]) -> list[int]:
    wheres = [c.where for d in gen.values() for c in d.cells] + [c.where for d in val.values() for c in d.cells]
    return sorted({w.shots for w in wheres})


def positions_by_model(gen: Mapping[str, GenerationData], shots: int = 0,
                       cell: str = "json->json") -> dict[str, dict[str, int]]:
    """Figure 1: violations per position bucket per model, for one format
    cell (the paper's JSON -> JSON) and the first arm at ``shots``."""
    out: dict[str, dict[str, int]] = {}
    for model, data in gen.items():
        arm = _first_arm([c.where for c in data.cells], shots)
        counts: dict[str, int] = defaultdict(int)
        for c in data.positions:
            if c.where.shots == shots and c.where.arm == arm and c.where.cell == cell:
                counts[c.label] += c.count
        out[model] = {p: counts.get(p, 0) for p in _POSITIONS}
    return out


def run_comparison_markdown(run: ScoredRun) -> str | None:
    gen, val = _collect(run)
    if not gen and not val:
        return None
    parts = [f"## {TITLE}\n\n"]
    for shots in _shots(gen, val):
        parts.append(f"**{shots}-shot** (best output format per row in bold; ▲ best model of a "
                     "schema-format block)\n\n")
        parts.append(format_efficacy_markdown(gen, val, shots) + "\n")
        positions = positions_by_model(gen, shots)
        if positions:
            parts.append(f"**Violations per position, json->json, {shots}-shot**\n\n")
            parts.append("| model | " + " | ".join(_POSITIONS) + " |\n|---|---|---|---|\n")
            for model, counts in positions.items():
                parts.append(f"| {model} | " + " | ".join(str(counts[p]) for p in _POSITIONS) + " |\n")
            parts.append("\n")
    return "".join(parts)


def run_comparison_html(run: ScoredRun) -> str | None:
    gen, val = _collect(run)
    if not gen and not val:
        return None
    parts = [f"<h2>{html.escape(TITLE)}</h2>"]
    for shots in _shots(gen, val):
        positions = positions_by_model(gen, shots)
        if positions:
            models = list(positions)
            matrix: list[list[float | None]] = [[float(positions[m][p]) for p in _POSITIONS] for m in models]
            parts.append(heatmap(matrix, models, _POSITIONS,
                                 f"Violations by position, json->json, {shots}-shot",
                                 percent=False, cmap="Reds", axes=("position in the schema", "model")))
    return "".join(parts) + markdown_html(run_comparison_markdown(run) or "")


def format_efficacy_markdown(
    generation: Mapping[str, GenerationData], validation: Mapping[str, ValidationData], shots: int = 0
) -> str:
    """The paper's Table 1 over models: rows schema format x model, columns
    output format x {Gen Acc, Val Acc} (first arm of each task at ``shots``);
    the best output format of each row in bold, and ▲ on the model with the
    most best-in-block cells of each schema format."""
    gen = {(m, c.where.schema_format, c.where.output_format): c.gen_acc.rate
           for m, d in generation.items() for c in d.cells if c.where.shots == shots
           and c.where.arm == _first_arm([x.where for x in d.cells], shots)}
    val = {(m, c.where.schema_format, c.where.output_format): c.val_acc.value
           for m, d in validation.items() for c in d.cells if c.where.shots == shots
           and c.where.arm == _first_arm([x.where for x in d.cells], shots)}
    models = list(dict.fromkeys([*generation, *validation]))
    sfs = sorted_formats(k[1] for k in [*gen, *val])
    ofs = sorted_formats(k[2] for k in [*gen, *val])
    head = "| schema | model | " + " | ".join(f"{o} Gen Acc | {o} Val Acc" for o in ofs) + " |"
    lines = [head, "|---" * (2 + 2 * len(ofs)) + "|"]
    for sf in sfs:
        wins = _block_wins(models, sf, ofs, (gen, val))
        for m in models:
            cells = []
            for table in (gen, val):
                row = {o: table[(m, sf, o)] for o in ofs if (m, sf, o) in table}
                top = max(row.values(), default=None)
                cells.append({o: (f"**{pct(v)}**" if v == top else pct(v)) for o, v in row.items()})
            shown = [cells[i].get(o, "") for o in ofs for i in (0, 1)]
            mark = " ▲" if wins and m == wins else ""
            lines.append(f"| {sf} | {m}{mark} | " + " | ".join(shown) + " |")
    return "\n".join(lines) + "\n"


def _first_arm(wheres: Sequence[cc.Cell], shots: int) -> str | None:
    return next((w.arm for w in wheres if w.shots == shots), None)


def _block_wins(models: Sequence[str], sf: str, ofs: Sequence[str],
                tables: tuple[dict[tuple[str, str, str], float], ...]) -> str | None:
    """The model best in most (output format, metric) columns of a schema
    block (None with one model or a tie)."""
    if len(models) < 2:
        return None
    score: dict[str, int] = defaultdict(int)
    for table in tables:
        for o in ofs:
            vals = {m: table[(m, sf, o)] for m in models if (m, sf, o) in table}
            top = max(vals.values(), default=None)
            winners = [m for m, v in vals.items() if v == top]
            # a column counts only where models compete and one is ahead
            if len(vals) >= 2 and len(winners) == 1:
                score[winners[0]] += 1
    ranked = sorted(score.items(), key=lambda kv: -kv[1])
    if not ranked or (len(ranked) > 1 and ranked[0][1] == ranked[1][1]):
        return None
    return ranked[0][0]
