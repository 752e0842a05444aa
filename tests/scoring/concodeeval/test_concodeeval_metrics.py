"""ConCodeEval grid metrics on hand-made scored tables with known answers."""

from __future__ import annotations

import numpy as np
import pytest

from conformbench.records.items import Condition, Item, ItemScore, KeywordViolation
from conformbench.scoring.concodeeval import metrics as cc
from conformbench.scoring.table import ScoredGeneration, ScoredTable


def test_rate_of_carries_the_wilson_interval() -> None:
    r = cc.rate_of(5, 10)
    assert (r.k, r.n, r.rate) == (5, 10, 0.5)
    assert r.lo == pytest.approx(0.2366, abs=1e-4)
    assert r.hi == pytest.approx(0.7634, abs=1e-4)
    zero = cc.rate_of(0, 20)
    assert zero.lo == 0.0 and zero.hi == pytest.approx(0.1611, abs=1e-4)
    assert cc.rate_of(0, 0).rate == 0.0


def test_macro_f1_known_values() -> None:
    # yes: tp 1, fp 0, fn 1 -> 2/3; no: tp 1, fp 1, fn 1 -> 1/2
    assert cc.macro_f1(["yes", "yes", "no", "no"], ["yes", "no", "no", None]) == pytest.approx(7 / 12)
    assert cc.macro_f1(["yes", "no"], ["yes", "no"]) == 1.0
    # always "yes" on a balanced set: yes F1 2/3, no F1 0
    assert cc.macro_f1(["yes", "no"] * 5, ["yes"] * 10) == pytest.approx(1 / 3)
    # an answer that is neither yes nor no is a miss, never a false positive
    # (yes: tp 0 fn 1 -> 0; no: tp 1 -> 1)
    assert cc.macro_f1(["yes", "no"], ["maybe", "no"]) == pytest.approx(0.5)


def test_bootstrap_is_seeded_and_brackets_the_estimate() -> None:
    labels = ["yes", "no"] * 50
    preds = ["yes", "no"] * 35 + ["no", "yes"] * 15
    acc, f1 = cc.bootstrap_acc_f1(labels, preds)
    again, _ = cc.bootstrap_acc_f1(labels, preds)
    assert acc == again
    assert acc.value == pytest.approx(0.7)
    assert acc.lo < 0.7 < acc.hi and 0.55 < acc.lo and acc.hi < 0.85
    assert f1.lo <= f1.value <= f1.hi
    # the vectorised F1 of every resample equals the scalar formula
    y, p = cc._encode(labels), cc._encode(preds)
    rows = np.stack([y, y[::-1]]), np.stack([p, p[::-1]])
    assert cc._f1_rows(*rows)[1] == pytest.approx(cc.macro_f1(labels[::-1], preds[::-1]))


def _gen_table() -> ScoredTable:
    cond_a = Condition.of("prompt_only", "schema", None, {"schema_format": "json", "output_format": "json", "shots": 0})
    cond_b = Condition.of("prompt_only", "schema", None, {"schema_format": "yaml", "output_format": "json", "shots": 0})
    items = [Item(id=f"cc_{i}", input={"schema_id": str(i), "renderings": {"json": "{ }" * (i + 1)}})
             for i in range(4)]
    ok = ItemScore(valid=True, correct=True, root_type_ok=True)
    bad = ItemScore(valid=False, correct=False, root_type_ok=False, violations=(
        KeywordViolation("type", "/type", "", "begin"),
        KeywordViolation("maximum", "/properties/a/maximum", "/a", "end"),
    ))
    unparsed = ItemScore(valid=False, correct=False, parsed=False)
    scores_a = [ok, ok, bad, unparsed]
    scores_b = [bad, bad, bad, ok]
    rows = [ScoredGeneration(it, c, s, "stop") for c, ss in ((cond_a, scores_a), (cond_b, scores_b))
            for it, s in zip(items, ss, strict=True)]
    return ScoredTable("generation", "m", tuple(i.id for i in items), (cond_a, cond_b), tuple(rows))


def test_gen_cells_counts() -> None:
    a, b = cc.gen_cells(_gen_table())
    assert a.where.cell == "json->json" and a.where.key == "json->json/0shot/prompt_only[schema]"
    assert (a.gen_acc.k, a.is_rate.k, a.rtv_rate.k, a.n) == (2, 1, 1, 4)
    assert (b.gen_acc.k, b.is_rate.k, b.rtv_rate.k) == (1, 0, 3)


def test_keyword_and_position_counts() -> None:
    table = _gen_table()
    kw = {(c.where.schema_format, c.label): c.count for c in cc.keyword_counts(table)}
    assert kw == {("json", "type"): 1, ("json", "maximum"): 1, ("yaml", "type"): 3, ("yaml", "maximum"): 3}
    pos = {(c.where.schema_format, c.label): c.count for c in cc.position_counts(table)}
    assert pos == {("json", "begin"): 1, ("json", "end"): 1, ("yaml", "begin"): 3, ("yaml", "end"): 3}


def test_token_stats_distinct_schemas() -> None:
    (stats,) = cc.table_token_stats(_gen_table(), tokenizer=len)
    assert stats.schema_format == "json" and stats.schemas == 4
    assert stats.max_tokens == 12 and stats.mean_tokens == pytest.approx(7.5)
    assert cc.rough_tokens('{"a": 1}') == 7  # { " a " : 1 }


def test_gate_metrics_short_key_only_for_first_condition_of_a_cell() -> None:
    w0 = cc.Cell(schema_format="json", output_format="json", shots=0, arm="prompt_only[schema]",
                 key="json->json/0shot/prompt_only[schema]")
    w3 = w0.model_copy(update={"shots": 3, "key": "json->json/3shot/prompt_only[schema]"})
    out = cc.gate_metrics([w0, w3], [{"gen_acc": 0.25}, {"gen_acc": 0.75}])
    assert out == {
        "gen_acc[json->json/0shot/prompt_only[schema]]": 0.25,
        "gen_acc[json->json]": 0.25,
        "gen_acc[json->json/3shot/prompt_only[schema]]": 0.75,
    }


def test_val_cells_and_misses() -> None:
    cond = Condition.of("unconstrained", None, None, {"schema_format": "json", "output_format": "xml", "shots": 0})
    items = [
        Item("s1:valid", {}, "yes", {"label": "yes"}),
        Item("s1:maximum", {}, "no", {"label": "no", "violated_keyword": "maximum",
                                      "violated_positions": {"json": "end"}}),
        Item("s2:valid", {}, "yes", {"label": "yes"}),
        Item("s2:type", {}, "no", {"label": "no", "violated_keyword": "type",
                                   "violated_positions": {"json": "begin"}}),
    ]
    preds = ["yes", "yes", None, "no"]
    rows = tuple(
        ScoredGeneration(it, cond, ItemScore(valid=None, correct=p == it.target, parsed=p is not None,
                                             label=str(it.target), prediction=p), "stop")
        for it, p in zip(items, preds, strict=True)
    )
    table = ScoredTable("validation", "m", tuple(i.id for i in items), (cond,), rows)
    (cell,) = cc.val_cells(table)
    assert cell.val_acc.value == 0.5 and cell.unparseable == 1
    assert (cell.predicted_yes, cell.predicted_no) == (2, 1)
    # yes: tp 1 fp 1 fn 1 -> 1/2; no: tp 1 fp 0 fn 1 -> 2/3
    assert cell.val_f1.value == pytest.approx(7 / 12)
    by_kw = {(m.label, m.missed, m.total) for m in cc.miss_by_violation(table, "keyword")}
    assert by_kw == {("maximum", 1, 1), ("type", 0, 1)}
    by_pos = {(m.label, m.missed, m.total) for m in cc.miss_by_violation(table, "position")}
    assert by_pos == {("end", 1, 1), ("begin", 0, 1)}
