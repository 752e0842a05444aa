"""The report section of the mask's toll (scoring/mask_section.py): per
constrained arm, the figures split by right / wrong but valid / invalid,
with intervals; n/a for an arm a server decoded; no section at all for a
replay without tolls (old and shipped replays keep their reports)."""

from __future__ import annotations

import json

import pytest

from conformbench.records.items import Condition, Item, ItemScore
from conformbench.records.mask_toll import MaskToll
from conformbench.scoring.intervals import item_share_interval, wilson
from conformbench.scoring.mask_chart import toll_svg
from conformbench.scoring.mask_section import TollSection, toll_data
from conformbench.scoring.table import ScoredGeneration, ScoredTable

LOCAL = Condition(arm="constrained", contract="answer", engine="llguidance")
SERVER = Condition(arm="constrained", contract="answer", engine="server")
FREE = Condition(arm="unconstrained")


def _toll(mean: float, refused: int, at: str | None = "/answer") -> MaskToll:
    return MaskToll(steps=10, mean_share=mean, min_share=mean / 2, refused_top=refused,
                    first_refused_step=3 if refused else None, first_refused_char=5 if refused else None,
                    first_refused_at=at if refused else None)


def _row(i: int, cond: Condition, valid: bool, correct: bool, toll: MaskToll | None) -> ScoredGeneration:
    return ScoredGeneration(item=Item(id=f"q{i}", input={}), condition=cond,
                            score=ItemScore(valid=valid, correct=correct), finish_reason="stop", mask_toll=toll)


def _table(rows: list[ScoredGeneration]) -> ScoredTable:
    conds = tuple(dict.fromkeys(r.condition for r in rows))
    return ScoredTable(task="t", model="m", item_ids=tuple(dict.fromkeys(r.item_id for r in rows)),
                       conditions=conds, rows=tuple(rows))


def test_the_groups_and_their_intervals() -> None:
    rows = [_row(0, LOCAL, True, True, _toll(0.9, 0)), _row(1, LOCAL, True, True, _toll(0.8, 1)),
            _row(2, LOCAL, True, False, _toll(0.4, 2)), _row(3, LOCAL, False, False, _toll(0.2, 3, "")),
            _row(0, FREE, True, True, None)]
    data = toll_data(_table(rows))
    assert data is not None and [a.key for a in data.arms] == [LOCAL.key]  # only arms with an engine
    groups = {g.group: g for g in data.arms[0].groups}
    assert list(groups) == ["right", "wrong but valid", "invalid", "all"]  # "valid": only without gold answers
    right = groups["right"]
    assert (right.n, right.refused_items, right.first_refused_step) == (2, 1, 3.0)
    assert right.mean_share == pytest.approx(0.85)
    assert right.mean_share_ci95 == pytest.approx(item_share_interval(__import__("numpy").array([0.9, 0.8])))
    assert right.refused_items_ci95 == wilson(1, 2)
    assert groups["invalid"].first_refused_at == [("", 1)]
    assert groups["all"].n == 4 and groups["all"].refused_steps == pytest.approx(1.5)
    text = TollSection().markdown(data)
    assert "| `constrained[answer]@llguidance` | wrong but valid | 1 | 40.0% [" in text


def test_a_server_arm_is_na_and_a_replay_without_tolls_has_no_section() -> None:
    data = toll_data(_table([_row(0, SERVER, True, True, None)]))
    assert data is not None and data.arms[0].na is not None and "server" in data.arms[0].na
    assert "n/a: the server applies the constraint" in TollSection().markdown(data)
    assert toll_data(_table([_row(0, LOCAL, True, True, None)])) is None


def test_the_data_reloads_from_report_json() -> None:
    data = toll_data(_table([_row(0, LOCAL, True, False, _toll(0.5, 1))]))
    assert data is not None
    section = TollSection()
    assert section.load(data.model_dump(mode="json")) == data


def test_an_empty_group_is_na_in_report_json_not_zero() -> None:
    """A group no answer fell in (n = 0) has no mean and no interval:
    report.json says null, report.md "—", the chart draws nothing for it,
    never ``0.0 [0.0, 0.0]`` (#58)."""
    data = toll_data(_table([_row(0, LOCAL, True, True, _toll(0.9, 0))]))
    assert data is not None
    stored = {g["group"]: g for g in data.model_dump(mode="json")["arms"][0]["groups"]}
    empty = stored["wrong but valid"]
    assert empty["n"] == 0 and empty["mean_share"] is None and empty["mean_share_ci95"] is None
    assert empty["min_share"] is None and empty["refused_items_ci95"] is None and empty["steps"] is None
    assert stored["right"]["mean_share"] == pytest.approx(0.9)
    assert "| `constrained[answer]@llguidance` | wrong but valid | 0 | — |" in TollSection().markdown(data)
    assert TollSection().load(json.loads(json.dumps(data.model_dump(mode="json")))) == data
    assert "wrong but valid (N=0)" not in toll_svg([("t", data)], standalone=False)


THINK = Condition(arm="think_then_constrain", contract="answer", engine="llguidance")


def _thinking_row(i: int, correct: bool, toll: MaskToll | None) -> ScoredGeneration:
    return ScoredGeneration(item=Item(id=f"q{i}", input={}), condition=THINK, thinking="free text",
                            score=ItemScore(valid=True, correct=correct), finish_reason="stop", mask_toll=toll)


def test_a_thinking_arm_is_read_over_its_answer_steps() -> None:
    """The free steps (share 1) of a think_then_constrain call dilute the
    whole call's mean: the section reads the answer part; a call that never
    reached the stop string (no answer part) is not counted; a replay made
    before the answer part shows the whole call and says so."""
    rows = [_thinking_row(0, True, _toll(0.95, 0).model_copy(update={"answer": _toll(0.6, 1)})),
            _thinking_row(1, False, _toll(0.9, 1).model_copy(update={"answer": _toll(0.3, 2)})),
            _thinking_row(2, False, _toll(0.99, 0))]
    data = toll_data(_table(rows))
    assert data is not None
    arm = data.arms[0]
    assert (arm.part, arm.measured, arm.n) == ("answer", 2, 3)
    groups = {g.group: g for g in arm.groups}
    assert groups["right"].mean_share == pytest.approx(0.6) and groups["wrong but valid"].n == 1
    assert groups["wrong but valid"].mean_share == pytest.approx(0.3)
    text = TollSection().markdown(data)
    assert "`think_then_constrain[answer]@llguidance` (answer) | right | 1 | 60.0%" in text
    assert "mean allowed share over the answer" in TollSection().terminal(data)[0]
    old = toll_data(_table([_thinking_row(0, True, _toll(0.95, 0))]))
    assert old is not None and old.arms[0].part == "thinking and answer"
    assert old.arms[0].groups[0].mean_share == pytest.approx(0.95)
