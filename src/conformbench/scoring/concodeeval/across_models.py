"""ConCodeEval across models, a run section: the paper's Table 1 layout
(rows schema format x model, columns output format x {Gen Acc, Val Acc}) and
Figure 1's position heatmap (models x begin/middle/end), from the per-model
ConCodeEval sections of a whole ScoredRun.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence

from pydantic import Field

from conformbench.records.base import FrozenRecord
from conformbench.records.results import ScoredRun
from conformbench.scoring.concodeeval import metrics as cc
from conformbench.scoring.concodeeval.figures import heatmap, markdown_html
from conformbench.scoring.concodeeval.sections import (
    GenerationData,
    GenerationSection,
    ValidationData,
    ValidationSection,
    n_cut_loop,
    sorted_formats,
)
from conformbench.scoring.percent import pct_bare
from conformbench.scoring.sections import RunSection, md_text, run_sections

__all__ = [
    "ComparisonData",
    "ComparisonSection",
    "ModelCell",
    "ModelKeywords",
    "ModelPositions",
    "comparison_data",
    "format_efficacy_markdown",
    "keywords_by_model",
    "positions_by_model",
]

_POSITIONS = ("begin", "middle", "end")
TITLE = "ConCodeEval across models (format efficacy, paper Table 1 layout)"

#: (model, schema format, output format) -> rate
_Grid = dict[tuple[str, str, str], float]


_Data = FrozenRecord


class ModelCell(_Data):
    """One model's rate in one format cell (first arm of its task at ``shots``),
    with its N and the answers cut at the budget or ended by the loop stop."""

    model: str
    shots: int
    schema_format: str
    output_format: str
    value: float
    n: int
    truncated: int
    looped: int


class ModelPositions(_Data):
    """Violations per position bucket of one model, json->json, first arm."""

    model: str
    shots: int
    counts: dict[str, int]


class ModelKeywords(_Data):
    """Violations per keyword of one model, json->json, first arm (Table 3)."""

    model: str
    shots: int
    counts: dict[str, int]


class ComparisonData(_Data):
    models: list[str]
    generation: list[ModelCell]
    validation: list[ModelCell]
    positions: list[ModelPositions]
    keywords: list[ModelKeywords] = Field(default_factory=list)

    @property
    def shots(self) -> list[int]:
        return sorted({c.shots for c in [*self.generation, *self.validation]})

    def cells(self, task: str, shots: int) -> dict[tuple[str, str, str], ModelCell]:
        cells = self.generation if task == "generation" else self.validation
        return {(c.model, c.schema_format, c.output_format): c for c in cells if c.shots == shots}

    def grid(self, task: str, shots: int) -> _Grid:
        return {k: c.value for k, c in self.cells(task, shots).items()}


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


def _first_arm(wheres: Sequence[cc.Cell], shots: int) -> str | None:
    return next((w.arm for w in wheres if w.shots == shots), None)


def _first_arm_cells(cells: Sequence[cc.GenCell | cc.ValCell], model: str) -> list[ModelCell]:
    """The cells of the first arm of each shots value, in run order."""
    wheres = [c.where for c in cells]
    return [ModelCell(model=model, shots=c.where.shots, schema_format=c.where.schema_format,
                      output_format=c.where.output_format, value=_value(c),
                      n=c.n, truncated=c.truncated, looped=c.looped)
            for c in cells if c.where.arm == _first_arm(wheres, c.where.shots)]


def _value(cell: cc.GenCell | cc.ValCell) -> float:
    return cell.gen_acc.rate if isinstance(cell, cc.GenCell) else cell.val_acc.value


def positions_by_model(gen: Mapping[str, GenerationData], shots: int = 0,
                       cell: str = "json->json") -> dict[str, dict[str, int]]:
    """Figure 1: violations per position bucket per model, for one format
    cell (the paper's JSON -> JSON) and the first arm at ``shots``."""
    counts = _counts_by_model(gen, lambda data: data.positions, shots, cell)
    return {model: {p: c.get(p, 0) for p in _POSITIONS} for model, c in counts.items()}


def keywords_by_model(gen: Mapping[str, GenerationData], shots: int = 0,
                      cell: str = "json->json") -> dict[str, dict[str, int]]:
    """Table 3: violations per keyword per model, one format cell, first arm."""
    return _counts_by_model(gen, lambda data: data.keywords, shots, cell)


def _counts_by_model(gen: Mapping[str, GenerationData],
                     tallies: Callable[[GenerationData], Iterable[cc.Count]],
                     shots: int, cell: str) -> dict[str, dict[str, int]]:
    """Per model, the counts by label of one tally (positions or keywords)
    in one format cell, for the first arm at ``shots``."""
    out: dict[str, dict[str, int]] = {}
    for model, data in gen.items():
        arm = _first_arm([c.where for c in data.cells], shots)
        counts: dict[str, int] = defaultdict(int)
        for c in tallies(data):
            if c.where.shots == shots and c.where.arm == arm and c.where.cell == cell:
                counts[c.label] += c.count
        out[model] = dict(counts)
    return out


def _keywords_markdown(data: ComparisonData, shots: int) -> str:
    rows = [k for k in data.keywords if k.shots == shots]
    if not rows:
        return ""
    totals: dict[str, int] = defaultdict(int)
    for r in rows:
        for label, n in r.counts.items():
            totals[label] += n
    labels = sorted(totals, key=lambda k: (-totals[k], k))
    lines = [f"**Violations per keyword, json->json, {shots}-shot** (the paper's Table 3)\n\n",
             "| constraint | " + " | ".join(md_text(r.model) for r in rows) + " |\n",
             "|---" * (len(rows) + 1) + "|\n"]
    lines += [f"| {md_text(label)} | " + " | ".join(str(r.counts.get(label, 0)) for r in rows) + " |\n"
              for label in labels]
    return "".join(lines) + "\n"


def comparison_data(
    generation: Mapping[str, GenerationData], validation: Mapping[str, ValidationData]
) -> ComparisonData:
    """The compact across-model data of per-model ConCodeEval sections."""
    gen = [c for m, d in generation.items() for c in _first_arm_cells(d.cells, m)]
    val = [c for m, d in validation.items() for c in _first_arm_cells(d.cells, m)]
    shots = sorted({c.shots for c in gen})
    positions = [ModelPositions(model=m, shots=s, counts=counts)
                 for s in shots for m, counts in positions_by_model(generation, s).items()]
    keywords = [ModelKeywords(model=m, shots=s, counts=counts)
                for s in shots for m, counts in keywords_by_model(generation, s).items()]
    return ComparisonData(models=list(dict.fromkeys([*generation, *validation])),
                          generation=gen, validation=val, positions=positions, keywords=keywords)


def format_efficacy_markdown(
    generation: Mapping[str, GenerationData], validation: Mapping[str, ValidationData], shots: int = 0
) -> str:
    """The paper's Table 1 over models for per-model section data."""
    return _efficacy_table(comparison_data(generation, validation), shots)


def _frame(keys: Sequence[tuple[str, str, str]], metrics: tuple[str, str]
           ) -> tuple[list[str], list[str], list[str]]:
    """Schema formats, output formats and the header lines of a table with
    rows schema format x model and columns output format x (gen, val)."""
    sfs = sorted_formats(k[1] for k in keys)
    ofs = sorted_formats(k[2] for k in keys)
    head = "| schema | model | " + " | ".join(f"{o} {metrics[0]} | {o} {metrics[1]}" for o in ofs) + " |"
    return sfs, ofs, [head, "|---" * (2 + 2 * len(ofs)) + "|"]


def _efficacy_table(data: ComparisonData, shots: int) -> str:
    """Rows schema format x model, columns output format x {Gen Acc, Val Acc};
    the best output format of each row in bold, and ▲ on the model with the
    most best-in-block cells of each schema format."""
    gen, val = data.grid("generation", shots), data.grid("validation", shots)
    sfs, ofs, lines = _frame([*gen, *val], ("Gen Acc", "Val Acc"))
    for sf in sfs:
        wins = _block_wins(data.models, sf, ofs, (gen, val))
        for m in data.models:
            cells = []
            for table in (gen, val):
                row = {o: table[(m, sf, o)] for o in ofs if (m, sf, o) in table}
                top = max(row.values(), default=None)
                # a row whose best is 0 has no best: nothing bold
                cells.append({o: (f"**{pct_bare(v)}**" if top and v == top else pct_bare(v)) for o, v in row.items()})
            shown = [cells[i].get(o, "") for o in ofs for i in (0, 1)]
            mark = " ▲" if wins and m == wins else ""
            lines.append(f"| {md_text(sf)} | {md_text(m)}{mark} | " + " | ".join(shown) + " |")
    return "\n".join(lines) + "\n"


def _counts_table(data: ComparisonData, shots: int) -> str:
    """N / cut / looped shares in the efficacy table's layout."""
    gen, val = data.cells("generation", shots), data.cells("validation", shots)
    sfs, ofs, lines = _frame([*gen, *val], ("Gen", "Val"))
    for sf in sfs:
        for m in data.models:
            shown = [_counts_text(table.get((m, sf, o))) for o in ofs for table in (gen, val)]
            lines.append(f"| {md_text(sf)} | {md_text(m)} | " + " | ".join(shown) + " |")
    return "\n".join(lines) + "\n"


def _counts_text(cell: ModelCell | None) -> str:
    return "" if cell is None else n_cut_loop(cell.n, cell.truncated, cell.looped)


def _block_wins(models: Sequence[str], sf: str, ofs: Sequence[str], tables: tuple[_Grid, ...]) -> str | None:
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


def _positions_markdown(data: ComparisonData, shots: int) -> str:
    rows = [p for p in data.positions if p.shots == shots]
    if not rows:
        return ""
    lines = [f"**Violations per position, json->json, {shots}-shot**\n\n",
             "| model | " + " | ".join(_POSITIONS) + " |\n|---|---|---|---|\n"]
    lines += [f"| {md_text(p.model)} | " + " | ".join(str(p.counts.get(b, 0)) for b in _POSITIONS) + " |\n"
              for p in rows]
    return "".join(lines) + "\n"


@run_sections.register("concodeeval_compare")
class ComparisonSection(RunSection[ComparisonData]):
    title = TITLE
    data_model = ComparisonData

    def compute(self, run: ScoredRun) -> ComparisonData | None:
        gen, val = _collect(run)
        if not gen and not val:
            return None
        return comparison_data(gen, val)

    def markdown(self, data: ComparisonData) -> str:
        parts = []
        for shots in data.shots:
            parts.append(f"**{shots}-shot** (best output format per row in bold; ▲ best model of a "
                         "schema-format block)\n\n")
            parts.append(_efficacy_table(data, shots) + "\n")
            parts.append(f"**N / cut at the token budget / ended by the loop stop, {shots}-shot** "
                         "(per model and cell, as above)\n\n")
            parts.append(_counts_table(data, shots) + "\n")
            parts.append(_positions_markdown(data, shots))
            parts.append(_keywords_markdown(data, shots))
        return "".join(parts)

    def html(self, data: ComparisonData) -> str:
        parts = []
        for shots in data.shots:
            rows = [p for p in data.positions if p.shots == shots]
            if rows:
                matrix: list[list[float | None]] = [[float(p.counts.get(b, 0)) for b in _POSITIONS]
                                                    for p in rows]
                parts.append(heatmap(matrix, [p.model for p in rows], _POSITIONS,
                                     f"Violations by position, json->json, {shots}-shot",
                                     percent=False, cmap="Reds",
                                     axes=("position in the schema", "model")))
        return "".join(parts) + markdown_html(self.markdown(data))
