"""The ConCodeEval report sections on synthetic scored tables."""

from __future__ import annotations

import dataclasses
import json

from conformbench.records.items import Condition, Item, ItemScore, KeywordViolation
from conformbench.records.results import ScoredRun, SectionResult, TaskModelResult
from conformbench.scoring.concodeeval.across_models import (
    ComparisonData,
    ComparisonSection,
    format_efficacy_markdown,
)
from conformbench.scoring.concodeeval.sections import (
    GenerationData,
    GenerationSection,
    ValidationData,
    ValidationSection,
)
from conformbench.scoring.sections import run_sections, sections
from conformbench.scoring.table import ScoredGeneration, ScoredTable

SF = ("json", "yaml", "xml", "python", "nl")
OF = ("json", "yaml", "xml")


def _gen_table(model: str = "m") -> ScoredTable:
    """4 items x 15 cells; cell (sf i, of j) has (i + j) % 5 correct of 4,
    capped at 4, and one 'multipleOf' violation at 'middle' per wrong item."""
    items = [Item(f"cc_{n}", {"schema_id": str(n), "renderings": {f: "x " * (n + 1) for f in SF}})
             for n in range(4)]
    conds = tuple(Condition.of("prompt_only", "schema", None, {"schema_format": sf, "output_format": of, "shots": 0}) for sf in SF for of in OF)
    rows = []
    for c in conds:
        good = (SF.index(str(c.axis("schema_format"))) + OF.index(str(c.axis("output_format")))) % 5
        for n, it in enumerate(items):
            ok = n < good
            viol = () if ok else (KeywordViolation("multipleOf", "/multipleOf", "", "middle"),)
            rows.append(ScoredGeneration(it, c, ItemScore(valid=ok, correct=ok, root_type_ok=True,
                                                          violations=viol), "stop"))
    return ScoredTable("generation", model, tuple(i.id for i in items), conds, tuple(rows))


def _val_table() -> ScoredTable:
    items = [Item("s:valid", {"schema_id": "s"}, "yes", {"label": "yes"}),
             Item("s:maximum", {"schema_id": "s"}, "no",
                  {"label": "no", "violated_keyword": "maximum", "violated_positions": {"json": "end"}})]
    conds = tuple(Condition.of("unconstrained", None, None, {"schema_format": sf, "output_format": "json", "shots": 0}) for sf in ("json", "nl"))
    rows = [ScoredGeneration(it, c, ItemScore(valid=None, correct=it.target == "yes", label=str(it.target),
                                              prediction="yes"), "stop")
            for c in conds for it in items]
    return ScoredTable("validation", "m", ("s:valid", "s:maximum"), conds, tuple(rows))


def test_sections_are_registered_for_their_tasks() -> None:
    assert sections.get("concodeeval_generation") is GenerationSection
    assert GenerationSection().applies_to("generation") and not GenerationSection().applies_to("gsm8k")
    assert ValidationSection().applies_to("validation") and not ValidationSection().applies_to("generation")


def test_generation_grid_markdown_metrics_and_reload() -> None:
    section = GenerationSection()
    data = section.compute(_gen_table())
    assert len(data.cells) == 15
    metrics = section.metrics(data)
    # (yaml=1 + xml=2) % 5 = 3 of 4
    assert metrics["gen_acc[yaml->xml]"] == 0.75
    assert metrics["gen_acc[yaml->xml/0shot/prompt_only[schema]]"] == 0.75
    assert metrics["is_rate[json->json]"] == 0.0 and metrics["rtv_rate[nl->xml]"] == 0.0
    md = section.markdown(data)
    # best of the xml row (xml=2: json 2/4, yaml 3/4, xml 4/4) is bold
    assert "| xml | 50.0 [15.0, 85.0] | 75.0 [30.1, 95.4] | **100.0 [51.0, 100.0]** |" in md
    # all 4 items of json->json are wrong: 4 + 3 + 2 violations in the json row
    assert "| multipleOf | 9 |" in md
    assert "| middle |" in md
    stored = json.loads(json.dumps(data.model_dump(mode="json")))
    assert section.load(stored) == data
    page = section.html(data)
    assert page.count("data:image/png;base64,") == 5  # 3 grids, positions, keyword bars
    assert "<td><strong>100.0 [51.0, 100.0]</strong></td>" in page


def test_validation_grid_and_misses() -> None:
    section = ValidationSection()
    data = section.compute(_val_table())
    metrics = section.metrics(data)
    assert metrics["val_acc[json->json]"] == 0.5 and metrics["val_acc[nl->json]"] == 0.5
    assert metrics["val_f1[json->json]"] == (2 / 3 + 0) / 2
    md = section.markdown(data)
    assert "| maximum | 1/1 | 1/1 |" in md  # missed on both schema formats
    assert "| end | 1/1 |" in md and "| unknown |" in md  # nl has no stored position
    assert isinstance(section.load(data.model_dump(mode="json")), ValidationData)
    assert section.html(data).count("data:image/png;base64,") == 2


def test_format_efficacy_table_marks_best_model() -> None:
    gen = {"weak": GenerationSection().compute(_gen_table("weak"))}
    strong_cells = [c.model_copy(update={"gen_acc": c.gen_acc.model_copy(update={"rate": 1.0})})
                    for c in gen["weak"].cells]
    gen["strong"] = GenerationData(cells=strong_cells, keywords=[], positions=[], tokens=[])
    md = format_efficacy_markdown(gen, {})
    assert "| json | strong ▲ | **100.0** |  | **100.0** |  | **100.0** |  |" in md
    assert "| json | weak | 0.0 |  | 25.0 |  | **50.0** |  |" in md


def _result(model: str, table: ScoredTable, section: GenerationSection | ValidationSection) -> TaskModelResult:
    data = section.compute(table)
    return TaskModelResult(task=table.task, model=model, correctness_label="x", n=table.n, arms=[],
                           comparisons=[], ledger=[], exclusions=[],
                           sections=[SectionResult(name=section.name, title=section.title,
                                                   data=data.model_dump(mode="json"))])


def test_run_comparison_over_two_models() -> None:
    run = ScoredRun(bootstrap={}, replays=[], results=[
        _result("a", _gen_table("a"), GenerationSection()),
        _result("b", _gen_table("b"), GenerationSection()),
        _result("a", _val_table(), ValidationSection()),
    ])
    section = ComparisonSection()
    assert run_sections.get("concodeeval_compare") is ComparisonSection
    data = section.compute(run)
    assert data is not None and data.models == ["a", "b"]
    md = section.markdown(data)
    # equal generation scores: no ▲; only model a ran validation
    assert "| json | a | 0.0 | **50.0** | 25.0 |  | **50.0** |  |" in md
    assert "a ▲" not in md and "b ▲" not in md
    # Figure 1: json->json has all 4 items wrong with one 'middle' violation each
    assert "| a | 0 | 4 | 0 |" in md and "| b | 0 | 4 | 0 |" in md
    assert section.html(data).count("data:image/png;base64,") == 1
    assert section.load(json.loads(data.model_dump_json())) == data
    assert isinstance(data, ComparisonData)
    assert section.compute(ScoredRun(bootstrap={}, replays=[], results=[])) is None


def test_run_comparison_shows_n_cut_and_looped_per_model_cell() -> None:
    table = _gen_table("b")
    finish = {"cc_0": "length", "cc_1": "loop"}  # in json->json: one item cut, one looped
    rows = tuple(dataclasses.replace(r, finish_reason=finish.get(r.item.id, r.finish_reason))
                 if r.condition.axis("schema_format") == "json" and r.condition.axis("output_format") == "json" else r
                 for r in table.rows)
    run = ScoredRun(bootstrap={}, replays=[], results=[
        _result("a", _gen_table("a"), GenerationSection()),
        _result("b", dataclasses.replace(table, rows=rows), GenerationSection()),
        _result("a", _val_table(), ValidationSection()),
    ])
    md = ComparisonSection().markdown(ComparisonSection().compute(run))
    counts = md.split("**N / cut at the token budget / ended by the loop stop, 0-shot**")[1]
    assert "| json | a | 4 / 0.0% / 0.0% | 2 / 0.0% / 0.0% | 4 / 0.0% / 0.0% |  |" in counts
    assert "| json | b | 4 / 25.0% / 25.0% |  | 4 / 0.0% / 0.0% |  |" in counts
    assert "| nl | b | 4 / 0.0% / 0.0% |  |" in counts


def test_a_row_whose_best_is_0_has_no_bold_cell() -> None:
    """"Best per row in bold" bolds nothing in a row of zeros: every cell
    tied at 0.0 is not a best (#58); a row with a best keeps its bold."""
    table = _gen_table()
    zero = tuple(dataclasses.replace(r, score=ItemScore(valid=False, correct=False, root_type_ok=True))
                 if r.condition.axis("schema_format") == "nl" else r for r in table.rows)
    md = GenerationSection().markdown(GenerationSection().compute(dataclasses.replace(table, rows=zero)))
    (nl,) = [line for line in md.splitlines() if line.startswith("| nl | 0.0 [")]  # the Gen Acc grid's row
    assert nl == "| nl | 0.0 [0.0, 49.0] | 0.0 [0.0, 49.0] | 0.0 [0.0, 49.0] |", nl
    assert "| xml | 50.0 [15.0, 85.0] | 75.0 [30.1, 95.4] | **100.0 [51.0, 100.0]** |" in md
