"""The runaway diagnostic: which cut answers end inside a runaway number
sequence. Unit cases for the rule, then the shipped replays: it names the
cut constrained BFCL answers that count inside an array, and no answer that
finished on its own ends like one."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from conformbench.records.replay_file import read_replay
from conformbench.records.results import ArmMetrics, TaskModelResult
from conformbench.reports.rescore import score_replays
from conformbench.reports.text import cut_text
from conformbench.scoring.runaway import MIN_CHARS, MIN_DIGITS, ends_in_runaway

REPLAYS = Path(__file__).resolve().parents[2] / "src" / "conformbench" / "data" / "replays"


def _counting(start: int, stop: int) -> str:
    return '{"numbers": [' + ", ".join(str(i) for i in range(start, stop))


def test_counting_inside_an_array_is_a_runaway() -> None:
    assert ends_in_runaway(_counting(1, 120))


def test_counting_cut_mid_number_or_mid_separator_is_a_runaway() -> None:
    text = _counting(1, 120)
    assert ends_in_runaway(text + ", 12")
    assert ends_in_runaway(text + ",")


def test_one_endless_number_is_a_runaway() -> None:
    assert ends_in_runaway('{"total": 12400' + "0" * MIN_DIGITS)
    assert not ends_in_runaway('{"total": 12400' + "0" * (MIN_DIGITS - 6))


def test_a_repeating_sentence_whose_numbers_change_is_a_runaway() -> None:
    text = "".join(f"{i}. {i} chickens = {i} * 3 = {3 * i} chickens\n" for i in range(1, 40))
    assert ends_in_runaway(text)


def test_counting_in_decimals_and_whole_numbers_is_one_run() -> None:
    text = '{"values": [' + ", ".join(f"{i}.1" if i % 2 else str(i) for i in range(1, 90))
    assert ends_in_runaway(text)


def test_a_short_count_is_not() -> None:
    text = _counting(1, 30)
    assert len(text) < MIN_CHARS
    assert not ends_in_runaway(text)


def test_only_the_end_counts() -> None:
    assert not ends_in_runaway(_counting(1, 200) + "], and then the model wrote a sentence of prose")


@pytest.mark.parametrize("text", [
    ("Janet's ducks lay 16 eggs per day. She eats 3 for breakfast and bakes muffins with 4. "
     "That leaves 16 - 3 - 4 = 9 eggs, which she sells at $2 each, so she makes 9 * 2 = $18 "
     "every day at the farmers' market, and over a week of 7 days that is 7 * 18 = $126.\n"
     "Answer: 18"),
    "word " * 200,
    "",
    "7",
])
def test_prose_and_number_free_repeats_are_not(text: str) -> None:
    assert not ends_in_runaway(text)


@cache
def _scored(name: str) -> TaskModelResult:
    (result,) = score_replays([REPLAYS / name]).results
    return result


def _arm(result: TaskModelResult, key_start: str) -> ArmMetrics:
    (arm,) = [a for a in result.arms if a.key.startswith(key_start)]
    return arm


def test_the_shipped_bfcl_constrained_cut_answers_are_named() -> None:
    """At 384 tokens 8 constrained answers are cut, all 8 counting inside an
    array (docs/tasks.md: at 1536 tokens none finishes)."""
    result = _scored("bfcl-simple.jsonl")
    arm = _arm(result, "constrained[")
    assert (arm.truncated, arm.runaway) == (8, 8)
    assert cut_text(arm) == "8 (4.0%; 8 runaway)"
    (warning,) = [w for w in result.warnings if w.startswith(arm.key)]
    assert "8 of them were cut inside a runaway number sequence" in warning
    named = {row.item_id for row in result.ledger if arm.key in row.runaway}
    assert len(named) == 8
    assert all(arm.key in row.truncated for row in result.ledger if arm.key in row.runaway)


def test_an_arm_without_runaway_cuts_shows_the_plain_count() -> None:
    arm = _arm(_scored("bfcl-simple.jsonl"), "prompt_only[")
    assert arm.runaway == 0
    assert cut_text(arm) == f"{arm.truncated} ({100 * arm.truncated / arm.n:.1f}%)"


@pytest.mark.parametrize("name", ["bfcl-simple.jsonl", "gsm8k.jsonl", "concodeeval-validation.jsonl"])
def test_no_finished_answer_in_a_shipped_replay_ends_like_a_runaway(name: str) -> None:
    finished = [g for g in read_replay(REPLAYS / name).generations if g.finish_reason == "stop"]
    assert len(finished) > 500
    for generation in finished:
        assert not ends_in_runaway(generation.text), generation.item_id
