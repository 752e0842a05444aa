"""The attention section (paper Figure 2) on scored tables whose generations
carry attention records of known masses; and, slow, on a live
``--attention`` run of the embedded model."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conformbench.cli.main import main
from conformbench.records.attention_record import PROFILE_BINS, AttentionRecord
from conformbench.records.items import Condition, Item, ItemScore
from conformbench.scoring.concodeeval.attention_data import (
    MEAN_INTERVAL_MIN_N,
    attention_data,
    segment_shares,
    token_shares,
)
from conformbench.scoring.concodeeval.attention_section import AttentionSection
from conformbench.scoring.sections import sections
from conformbench.scoring.table import ScoredGeneration, ScoredTable

LAYERS = 2
GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "attention_section.md"


def _record(tokens: int, bme: tuple[float, float, float], end_heavy: bool = False) -> AttentionRecord:
    """Two layers: layer 0 with ``bme``, layer 1 with half the mass (the
    same shares); the profile puts the schema's mass on its last slice
    (``end_heavy``) or evenly."""
    whole = sum(bme)
    profile = [whole if (i == PROFILE_BINS - 1) == end_heavy or not end_heavy else 0.0 for i in range(PROFILE_BINS)]
    profile = [p / sum(profile) * whole for p in profile]
    return AttentionRecord(schema_tokens=(5, 5 + tokens), keys=tokens + 10,
                           bme=[bme, tuple(x / 2 for x in bme)],  # type: ignore[list-item]
                           schema_share=[whole, whole / 2], profile=[profile, [p / 2 for p in profile]])


def test_token_and_segment_shares_follow_the_30_40_30_split() -> None:
    rec = _record(10, (0.1, 0.2, 0.1))
    assert list(token_shares(rec)) == pytest.approx([0.3, 0.4, 0.3])
    assert list(segment_shares(rec)) == pytest.approx([0.25, 0.5, 0.25])
    # three tokens: fractions 0, 1/3, 2/3 before each, so none is in the end
    assert list(token_shares(_record(3, (0.1, 0.1, 0.0)))) == pytest.approx([1 / 3, 2 / 3, 0.0])


def _validation_table(n: int) -> ScoredTable:
    """n 'no' items violating a keyword at the begin of a json schema: the
    first half with low attention on the begin (lift 0.5), answered wrong;
    the others with high attention (lift 2), answered 'no'. Plus one 'yes'
    item and one generation without a record."""
    cond = Condition.of("unconstrained", None, None, {"schema_format": "json", "output_format": "json", "shots": 0})
    rows = []
    ids = []
    for i in range(n):
        item = Item(f"s{i}:max", {"schema_id": f"s{i}"}, "no",
                    {"label": "no", "violated_keyword": "maximum", "violated_positions": {"json": "begin"}})
        low = i < n // 2
        begin = 0.15 if low else 0.6  # of 0.8 on the schema; begin holds 30% of the tokens
        rec = _record(20, tuple(0.8 * x for x in (begin, (1 - begin) * 4 / 7, (1 - begin) * 3 / 7)),  # type: ignore[arg-type]
                      end_heavy=True)
        rows.append(ScoredGeneration(item, cond, ItemScore(valid=None, correct=not low, label="no",
                                                           prediction="yes" if low else "no"), "stop",
                                     attention=rec))
        ids.append(item.id)
    yes = Item("s0:valid", {"schema_id": "s0"}, "yes", {"label": "yes"})
    rows.append(ScoredGeneration(yes, cond, ItemScore(valid=None, correct=True, label="yes", prediction="yes"),
                                 "stop", attention=_record(4, (0.1, 0.1, 0.1))))
    plain = Item("s1:valid", {"schema_id": "s1"}, "yes", {"label": "yes"})
    rows.append(ScoredGeneration(plain, cond, ItemScore(valid=None, correct=True, label="yes"), "stop"))
    return ScoredTable("validation", "m", (*ids, yes.id, plain.id), (cond,), tuple(rows))


def test_no_attention_records_no_section() -> None:
    cond = Condition.of("unconstrained", None, None, {"schema_format": "json", "output_format": "json", "shots": 0})
    item = Item("a", {"schema_id": "a"}, "yes", {"label": "yes"})
    table = ScoredTable("validation", "m", ("a",), (cond,),
                        (ScoredGeneration(item, cond, ItemScore(valid=None, correct=True), "stop"),))
    assert attention_data(table) is None
    assert sections.get("concodeeval_attention") is AttentionSection
    assert AttentionSection().applies_to("validation") and not AttentionSection().applies_to("gsm8k")


def test_attention_on_the_violated_segment_against_the_verdict() -> None:
    data = attention_data(_validation_table(10))
    assert data is not None and data.without == 1
    [seg] = data.segments
    assert seg.shares[0].n == 11 and seg.shares[0].lo is None  # below MEAN_INTERVAL_MIN_N: the mean alone
    assert seg.layers == LAYERS
    [kw] = data.keyword
    assert (kw.no_items, kw.located, kw.by_segment) == (10, 10, {"begin": 10, "middle": 0, "end": 0})
    assert kw.median_lift == pytest.approx((0.5 + 2.0) / 2)
    assert (kw.low.k, kw.low.n, kw.high.k, kw.high.n) == (5, 5, 0, 5)
    assert kw.lift_wrong.mean == pytest.approx(0.5) and kw.lift_right.mean == pytest.approx(2.0)
    md = AttentionSection().markdown(data)
    assert "| json->json/0shot/unconstrained | 10 | 10 (10 / 0 / 0) | 1.25 | 5/5 = 100.0 [56.6, 100.0] |" in md
    assert "do not overlap in: json->json/0shot/unconstrained" in md
    assert "1 generation(s) have no attention record" in md


def test_the_profile_heatmap_is_per_schema_format_and_leaves_short_schemas_out() -> None:
    data = attention_data(_validation_table(4))
    assert data is not None
    [profile] = data.profiles
    # the 4-token 'yes' schema has fewer tokens than slices
    assert (profile.schema_format, profile.generations, profile.short) == ("json", 4, 1)
    assert len(profile.shares) == LAYERS and profile.shares[0][-1] == pytest.approx(1.0)
    page = AttentionSection().html(data)
    assert page.count("data:image/png;base64,") == 1 and "<table>" in page


def test_intervals_from_the_minimum_n_and_the_data_reloads() -> None:
    data = attention_data(_validation_table(MEAN_INTERVAL_MIN_N))
    assert data is not None
    begin = data.segments[0].shares[0]
    assert begin.n == MEAN_INTERVAL_MIN_N + 1 and begin.lo is not None and begin.hi is not None
    assert begin.lo <= begin.mean <= begin.hi
    section = AttentionSection()
    assert section.load(json.loads(json.dumps(data.model_dump(mode="json")))) == data
    [line] = section.terminal(data)
    assert line.startswith("  attention, validation json->json/0shot/unconstrained: begin / middle / end")
    assert f"N={MEAN_INTERVAL_MIN_N + 1}" in line


def test_the_section_matches_its_golden_file() -> None:
    """CONFORMBENCH_UPDATE_GOLDEN=1 pytest tests/scoring/concodeeval rewrites it."""
    data = attention_data(_validation_table(4))
    assert data is not None
    text = AttentionSection().markdown(data)
    if os.environ.get("CONFORMBENCH_UPDATE_GOLDEN"):
        GOLDEN.write_text(text, encoding="utf-8")
    assert text == GOLDEN.read_text(encoding="utf-8")


@pytest.mark.long
@pytest.mark.slow
def test_a_live_attention_run_reports_the_section(tmp_path: Path) -> None:
    code = main(["run", "--task", "validation", "-n", "1", "--schema-format", "json", "--output-format", "json",
                 "--arm", "unconstrained", "--threads", "1", "--attention", "--max-tokens", "8", "--no-canary",
                 "--quiet", "--out", str(tmp_path)])
    assert code == 0
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert md.count("### ConCodeEval: attention on the schema (paper Figure 2)") == 1
    assert "| json->json/0shot/unconstrained | 2 |" in md
    stored = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    [section] = [s for s in stored["results"][0]["sections"] if s["name"] == "concodeeval_attention"]
    assert section["data"]["segments"][0]["layers"] == 30
