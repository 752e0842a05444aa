"""``score REPLAY --against OTHER``: one decoding paired with another by
item and condition. The other side is the shipped greedy validation
replay; the scored side is a subset of it re-decoded "by beam search" (the
header says beams 3, the items store only the two renderings the run asked
for, and chosen answers are flipped), so every number is known."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conformbench.cli.main import main
from conformbench.reports.rescore import score_replays
from conformbench.runner.ledger.content import _same_input
from conformbench.runner.shipped import shipped_replay
from conformbench.scoring.against import AgainstData, AgainstSection, decoding_label

GOLDEN = Path(__file__).resolve().parent / "golden" / "against_section.md"
CELLS = ({"schema_format": "json", "output_format": "json"}, {"schema_format": "yaml", "output_format": "json"})
SCHEMAS = 10


def _cell(cond: dict[str, object]) -> dict[str, object]:
    return {k: cond[k] for k in ("schema_format", "output_format")}


def _beam_replay(path: Path, flip: int) -> tuple[Path, list[bool]]:
    """The first SCHEMAS schemas' items in the two CELLS, decoded 'with beams
    3'; in json->json the answers of the first ``flip`` items are turned
    round (yes <-> no). Returns the path and, per json->json answer, whether
    it says what the dataset's label says (the scorer may relabel a few)."""
    lines = shipped_replay("concodeeval-validation").read_text(encoding="utf-8").splitlines()
    out, items, hits = [], set(), []
    for line in lines:
        rec = json.loads(line)
        if rec["kind"] == "header":
            rec["spec"]["decoding"]["beams"] = 3
            rec["spec"]["tasks"][0].update(n=SCHEMAS, schema_formats=["json", "yaml"], output_formats=["json"])
        elif rec["kind"] == "item":
            if int(rec["item"]["input"]["schema_id"].split("-")[1]) > SCHEMAS:
                continue
            items.add(rec["item"]["id"])
            rec["item"]["input"]["renderings"] = {k: rec["item"]["input"]["renderings"][k] for k in ("json", "yaml")}
        elif rec["kind"] == "generation":
            if rec["item_id"] not in items or _cell(rec["condition"]) not in CELLS:
                continue
            rec["beams"] = 3
            if _cell(rec["condition"]) == CELLS[0]:
                said_no = rec["text"].strip().lower().startswith("no")
                target = "no" if ":valid" not in rec["item_id"] else "yes"
                hits.append(said_no == (target == "no"))
                if len(hits) <= flip:
                    rec["text"] = "Yes." if said_no else "No."
        out.append(json.dumps(rec))
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path, hits


@pytest.fixture(scope="module")
def paired(tmp_path_factory: pytest.TempPathFactory) -> tuple[AgainstData, list[bool]]:
    beam, hits = _beam_replay(tmp_path_factory.mktemp("beam") / "replay.jsonl", flip=6)
    run = score_replays([beam], against=[shipped_replay("concodeeval-validation")])
    [section] = [s for s in run.sections if s.name == AgainstSection.name]
    return AgainstSection().load(section.data), hits


def test_each_condition_is_paired_by_item_with_the_greedy_replay(paired: tuple[AgainstData, list[bool]]) -> None:
    data, hits = paired
    assert (data.from_label, data.to_label) == ("greedy", "beams 3")
    assert not data.unpaired
    by_cell = {r.condition: r for r in data.rows}
    assert sorted(by_cell) == ["json->json/0shot/unconstrained", "yaml->json/0shot/unconstrained"]
    same = by_cell["yaml->json/0shot/unconstrained"]
    # untouched answers: every pair the same text, no difference, no discordant pair
    assert (same.n, same.n_from, same.n_to, same.same_text) == (20, 200, 20, 20)
    [d] = same.deltas
    assert d.metric == "Val Acc" and d.delta == 0 and d.discordant == (0, 0) and d.mcnemar_p == 1
    flipped = by_cell["json->json/0shot/unconstrained"]
    [d] = flipped.deltas
    right_to_wrong = sum(hits[:6])
    assert flipped.n == 20 and flipped.same_text == 14
    assert d.discordant == (right_to_wrong, 6 - right_to_wrong)
    assert d.delta == pytest.approx(d.to_rate - d.from_rate) == pytest.approx((6 - 2 * right_to_wrong) / 20)
    # 20 items: Newcombe's interval, never the bootstrap
    assert d.method == "newcombe" and d.ci95[0] < d.delta < d.ci95[1]


def test_the_section_renders_with_n_and_the_interval_and_says_what_is_not_paired(
        paired: tuple[AgainstData, list[bool]]) -> None:
    data, _ = paired
    md = AgainstSection().markdown(data)
    assert "| task | model | condition | metric | N | greedy % | beams 3 % |" in md
    assert "| validation | smollm2-135m | yaml->json/0shot/unconstrained | Val Acc | 20 |" in md
    assert "(Newcombe)" in md and "No pooled interval" in md
    lines = AgainstSection().terminal(data)
    # neither side records its build (the shipped replay predates it): said, once
    assert len(lines) == 3 and lines[0].startswith("  builds differ: ") and "record(s) no build" in lines[0]
    assert all("N=20" in line for line in lines[1:])
    assert "no detectable effect at N=20" in lines[1]
    assert "<table class=\"arms\">" in AgainstSection().html(data)


@pytest.mark.long
def test_a_condition_the_other_side_lacks_is_named(tmp_path: Path) -> None:
    beam, _ = _beam_replay(tmp_path / "replay.jsonl", flip=0)
    run = score_replays([beam], against=[shipped_replay("concodeeval-generation")])
    data = AgainstSection().load(run.sections[-1].data)
    assert data.rows == []
    assert data.unpaired == ["validation on smollm2-135m: no generations of the task in the --against replays"]
    assert "No condition is in both." in AgainstSection().markdown(data)


def test_the_cli_writes_the_section_into_every_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    beam, _ = _beam_replay(tmp_path / "replay.jsonl", flip=2)
    code = main(["score", str(beam), "--against", str(shipped_replay("concodeeval-validation")),
                 "--out", str(tmp_path / "out")])
    assert code == 0
    said = capsys.readouterr().err
    assert "beams 3 vs greedy, validation json->json/0shot/unconstrained: Val Acc" in said
    md = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert md.count("## Decoding against decoding (paired by item and condition)") == 1
    assert "Decoding against decoding" in (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    stored = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    assert [s["name"] for s in stored["sections"]][-1] == "decoding_against"


def test_inputs_match_when_one_side_stores_fewer_renderings() -> None:
    a = {"schema": {"type": "number"}, "renderings": {"json": "j", "yaml": "y"}}
    assert _same_input(a, {"schema": {"type": "number"}, "renderings": {"json": "j", "yaml": "y", "xml": "x"}})
    assert not _same_input(a, {"schema": {"type": "string"}, "renderings": {"json": "j", "yaml": "y"}})
    assert not _same_input(a, {"schema": {"type": "number"}, "renderings": {"json": "other"}})
    assert not _same_input(a, {"schema": {"type": "number"}})


def test_decoding_labels_come_from_the_run_specs() -> None:
    from conformbench.records.results import ReplaySource

    def src(decoding: dict[str, object]) -> ReplaySource:
        return ReplaySource(path="r", sha256="0", run_id="x", created="t", conformbench_version="v",
                            spec={"decoding": decoding}, hardware={}, models=[], generations=0, truncated_tail=0)

    assert decoding_label([src({"temperature": 0.0})]) == "greedy"
    assert decoding_label([src({"beams": 3})]) == "beams 3"
    assert decoding_label([src({"temperature": 0.7}), src({"beams": 1})]) == "sampling (temperature 0.7) / greedy"


def test_the_section_matches_its_golden_file(paired: tuple[AgainstData, list[bool]]) -> None:
    """CONFORMBENCH_UPDATE_GOLDEN=1 pytest tests/scoring/test_against.py rewrites it."""
    data, _ = paired
    # the build sentence names the tmp replay's path: the golden file holds a fixed one
    builds = ["beam.jsonl, greedy.jsonl record(s) no build (made before conformbench recorded it): "
              "whether the texts come from one build cannot be checked"]
    text = AgainstSection().markdown(data.model_copy(update={"against": ["greedy.jsonl"], "builds": builds}))
    if os.environ.get("CONFORMBENCH_UPDATE_GOLDEN"):
        GOLDEN.write_text(text, encoding="utf-8")
    assert text == GOLDEN.read_text(encoding="utf-8")


def test_two_replays_from_different_builds_are_said_to_be() -> None:
    """``score --against`` names each build fact that differs (docs/guarantees.md:
    greedy texts are identical only on one build, CPU and thread count)."""
    from conformbench.scoring.builds import build_differences

    base = {"cpu_features": ["avx", "avx2", "fma"], "llama_cpp": {"llama_cpp_python": "0.3.36",
            "system_info": "CPU : SSE3 = 1 | AVX2 = 1"}, "models": {"m": {"threads": 1, "dtype": None}}}
    assert build_differences([("a.jsonl", base), ("b.jsonl", dict(base))]) == []
    other = {**base, "cpu_features": ["avx", "avx2", "avx512f", "fma"], "models": {"m": {"threads": 2, "dtype": None}}}
    said = build_differences([("a.jsonl", base), ("b.jsonl", other)])
    assert len(said) == 2 and said[0].startswith("different CPU features: a.jsonl has")
    assert "avx512f" in said[0] and said[1].startswith("different threads or dtype")
    assert "record(s) no build" in build_differences([("a.jsonl", base), ("old.jsonl", {})])[0]
