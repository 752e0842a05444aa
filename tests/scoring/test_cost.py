"""What a packaged free step costs in the cost section (scoring/cost.py):
the cost its answer's record holds; in an older replay, that of the
unconstrained answer of identical text it reused; else unknown, shown as
n/a with its footnote and never counted as 0 (calls stay counted)."""

from __future__ import annotations

from conformbench.records.items import Condition, Item, ItemScore
from conformbench.records.replay import StepCost
from conformbench.scoring.cost import ArmCost, CostData, arm_cost
from conformbench.scoring.cost_section import UNKNOWN_STEP_NOTE, CostSection
from conformbench.scoring.table import ScoredGeneration, ScoredTable

RTC = Condition(arm="reason_then_constrain", contract="answer", engine="llguidance")
FREE = Condition(arm="unconstrained")


def _row(i: int, cond: Condition, text: str = "{}", free_text: str | None = None, step: StepCost | None = None,
         finish: str = "stop") -> ScoredGeneration:
    """An answer of 10 prompt tokens, 5 generated tokens and 1 second."""
    return ScoredGeneration(item=Item(id=f"q{i}", input={}), condition=cond, score=ItemScore(valid=True, correct=True),
                            finish_reason=finish, text=text, prompt_tokens=10, completion_tokens=5, seconds=1.0,
                            free_text=free_text, step=step)


def _table(rows: list[ScoredGeneration]) -> ScoredTable:
    return ScoredTable(task="t", model="m", item_ids=tuple(dict.fromkeys(r.item_id for r in rows)),
                       conditions=tuple(dict.fromkeys(r.condition for r in rows)), rows=tuple(rows))


def _arm(rows: list[ScoredGeneration], cond: Condition = RTC) -> ArmCost:
    return arm_cost(_table(rows), cond)


def test_a_recorded_step_cost_is_added_to_its_answer() -> None:
    step = StepCost(prompt_tokens=40, completion_tokens=300, seconds=12.5, finish_reason="length")
    cost = _arm([_row(0, RTC, free_text="so 3", step=step), _row(1, RTC, free_text="so 4", step=step)])
    assert cost.calls == 2.0 and cost.unknown_step_costs == 0 and cost.steps_cut == 2
    assert (cost.prompt_tokens, cost.completion_tokens, cost.seconds) == (50.0, 305.0, 13.5)
    assert cost.tokens_per_right == 355.0 and cost.seconds_per_right == 13.5


def test_an_older_replay_costs_the_step_as_the_unconstrained_answer_it_reused() -> None:
    rows = [_row(0, FREE, text="so 3", finish="length"), _row(0, RTC, free_text="so 3")]
    cost = _arm(rows)
    assert cost.calls == 2.0 and cost.unknown_step_costs == 0 and cost.steps_cut == 1
    assert (cost.prompt_tokens, cost.completion_tokens, cost.seconds) == (20.0, 10.0, 2.0)


def test_an_unknown_step_cost_is_n_a_never_0() -> None:
    # the unconstrained answer's text differs: not the step this answer packaged
    rows = [_row(0, FREE, text="so 5"), _row(0, RTC, free_text="so 3"),
            _row(1, RTC, free_text="so 4", step=StepCost(prompt_tokens=1, completion_tokens=2, seconds=0.5,
                                                         finish_reason="stop"))]
    cost = _arm(rows)
    assert cost.calls == 2.0  # the step's call happened: counted
    assert cost.unknown_step_costs == 1
    assert cost.prompt_tokens is None and cost.completion_tokens is None and cost.seconds is None
    assert cost.tokens_per_valid is None and cost.tokens_per_right is None
    assert cost.seconds_per_valid is None and cost.seconds_per_right is None
    assert cost.calls_per_right == 2.0
    section = CostSection()
    data = CostData(arms=[_arm(rows, FREE), cost])
    markdown = section.markdown(data)
    row = next(line for line in markdown.splitlines() if line.startswith(f"| `{RTC.key}`"))
    assert row.split(" | ")[4:7] == ["n/a", "n/a", "n/a"]
    assert UNKNOWN_STEP_NOTE in markdown and "(1 of 2 items)" in markdown
    assert "n/a" in section.html(data).split(RTC.key)[1]
    assert any(RTC.key in line and "tokens n/a, seconds n/a" in line for line in section.terminal(data))
    metrics = section.metrics(data)  # a gate never reads an unknown cost as 0
    assert f"mean_calls[{RTC.key}]" in metrics and f"mean_completion_tokens[{RTC.key}]" not in metrics
    assert metrics[f"mean_completion_tokens[{FREE.key}]"] == 5.0
