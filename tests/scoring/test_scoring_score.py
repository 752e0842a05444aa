"""Rescoring replays: honest denominators, exclusions dropped from every arm,
paired comparisons, sections, determinism."""

from __future__ import annotations

from pathlib import Path

import pytest
import runfakes

from conformbench.errors import UsageError
from conformbench.records.replay_file import read_replay
from conformbench.records.results import TaskModelResult
from conformbench.reports.rescore import score_replays
from conformbench.runner.run import execute
from conformbench.runner.spec import parse_spec


def _replay(out: Path, **task: object) -> Path:
    execute(parse_spec(runfakes.fake_spec(out, **task)))
    return out / "replay.jsonl"


def _only(path: Path) -> TaskModelResult:
    run = score_replays([path])
    assert len(run.results) == 1
    return run.results[0]


def test_rates_are_over_all_items_and_quadrants_add_up(tmp_path: Path) -> None:
    result = _only(_replay(tmp_path))
    arms = {a.key: a for a in result.arms}
    po = arms["prompt_only[answer]"]
    assert po.n == 6 and po.validity and po.accuracy and po.wrong_but_valid and po.quadrants
    assert (po.validity.k, po.accuracy.k, po.wrong_but_valid.k) == (4, 2, 2)
    assert po.wrong_but_valid.rate == pytest.approx(2 / 6)  # not 2/4 (the valid subset)
    c = arms["constrained[answer]@llguidance"]
    assert c.quadrants is not None and c.truncated == 1
    assert sum(c.quadrants.model_dump().values()) == 6
    free = arms["unconstrained"]
    assert free.validity is None and free.wrong_but_valid is None and free.quadrants is None
    assert free.accuracy is not None and free.accuracy.k == 3


def test_headline_and_confounded_comparisons(tmp_path: Path) -> None:
    result = _only(_replay(tmp_path))
    roles = [(c.from_key, c.to_key, c.role) for c in result.comparisons]
    assert roles[0] == ("prompt_only[answer]", "constrained[answer]@llguidance", "headline")
    assert ("unconstrained", "constrained[answer]@llguidance", "confounded") in roles
    head = result.comparisons[0]
    assert head.flips is not None
    assert (head.flips.right_to_wrong, head.flips.wrong_to_right) == (1, 1)  # q3 and q2
    assert head.transitions["invalid/wrong -> valid/wrong"] == 1  # q1
    acc = next(d for d in head.deltas if d.metric == "accuracy")
    assert acc.delta == 0.0 and acc.discordant == (1, 1) and acc.mcnemar_p == 1.0
    assert acc.ci95[0] <= 0.0 <= acc.ci95[1] and not acc.excludes_0
    assert [r.states["unconstrained"] for r in result.ledger][:2] == ["n/a/right", "n/a/wrong"]


def test_an_excluded_item_leaves_only_the_grammar_arms_and_is_listed(tmp_path: Path) -> None:
    result = _only(_replay(tmp_path, params={"unsupported": ["q1"]}))
    grammar = {"constrained[answer]@llguidance", "reason_then_constrain[answer]@llguidance"}
    assert result.n == 6
    assert {a.key: a.n for a in result.arms} == {
        a.key: (5 if a.key in grammar else 6) for a in result.arms}
    assert all(a.accuracy is None or a.accuracy.n == a.n for a in result.arms)
    assert [r.item_id for r in result.ledger] == ["q0", "q1", "q2", "q3", "q4", "q5"]
    assert set(result.ledger[1].states) == {a.key for a in result.arms} - grammar
    assert {(e.item_id, e.condition) for e in result.exclusions} == {("q1", k) for k in grammar}
    # a pair is over the items both of its conditions have
    assert {(c.from_key, c.to_key): c.n for c in result.comparisons} == {
        (c.from_key, c.to_key): (5 if c.to_key in grammar else 6) for c in result.comparisons}
    assert any(c.n == 5 for c in result.comparisons) and any(c.n == 6 for c in result.comparisons)


def test_a_missing_generation_leaves_its_condition_only_and_is_explained(tmp_path: Path) -> None:
    path = _replay(tmp_path, n=3)
    lines = path.read_text().splitlines(keepends=True)
    last = max(i for i, line in enumerate(lines) if '"kind":"generation"' in line)
    path.write_text("".join(lines[:last] + lines[last + 1:]))  # the last generation is gone
    result = _only(path)
    assert result.n == 3
    (excl,) = result.exclusions
    assert excl.item_id == "q2" and excl.condition == "constrained[answer]@llguidance"
    assert excl.reason == "incomplete: the run has no generation for it yet"
    assert {a.key: a.n for a in result.arms}["constrained[answer]@llguidance"] == 2


def test_rescoring_is_deterministic(tmp_path: Path) -> None:
    path = _replay(tmp_path)
    assert score_replays([path]).model_dump_json() == score_replays([path]).model_dump_json()


def test_sections_are_computed_per_task_and_model(tmp_path: Path) -> None:
    result = _only(_replay(tmp_path))
    (tally,) = [s for s in result.sections if s.name == "fake-tally"]
    assert tally.data["right"]["unconstrained"] == 3
    assert tally.metrics["n_right[prompt_only[answer]]"] == 2.0


def test_replays_merge_but_never_duplicate(tmp_path: Path) -> None:
    a = _replay(tmp_path / "a", n=2)
    spec = runfakes.fake_spec(tmp_path / "b", n=2)
    spec["models"][0]["label"] = "other-model"
    execute(parse_spec(spec))
    run = score_replays([a, tmp_path / "b" / "replay.jsonl"])
    assert [(r.task, r.model) for r in run.results] == [("fake-qa", "fake-model"),
                                                        ("fake-qa", "other-model")]
    assert len(run.replays) == 2
    with pytest.raises(UsageError, match="is in both"):
        score_replays([a, a])
    with pytest.raises(UsageError, match="no replay files"):
        score_replays([])


def test_generation_without_item_record_is_an_error(tmp_path: Path) -> None:
    path = _replay(tmp_path, n=1)
    kept = [line for line in path.read_text().splitlines(keepends=True)
            if '"kind":"item"' not in line]
    path.write_text("".join(kept))
    assert read_replay(path).items == []
    with pytest.raises(UsageError, match="no item record for fake-qa/q0"):
        score_replays([path])


def test_within_one_replay_the_latest_answer_counts(tmp_path: Path) -> None:
    """A resumed run appends a retry after an item's error record: scoring
    uses the answer, whether the error came before it or (a failed later
    try) after it, and counts the records it did not use."""
    import json

    path = _replay(tmp_path)
    before = _only(path)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if '"kind":"generation"' in line)
    failed = json.loads(lines[first]) | {"finish_reason": "error", "text": "", "error": "HTTP 503"}
    error_line = json.dumps(failed) + "\n"
    path.write_text("".join(lines[:first] + [error_line] + lines[first:] + [error_line]), encoding="utf-8")
    run = score_replays([path])
    assert run.replays[0].superseded == 2
    assert run.results[0].model_dump() == before.model_dump()
