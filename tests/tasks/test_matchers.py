"""The custom task's answer matchers (exact, contains, regex, number) and
normalisers, as the task applies them."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformbench.errors import UsageError
from conformbench.records.items import Condition, TaskOptions
from conformbench.tasks.base import tasks
from conformbench.tasks.custom import CustomQaTask
from conformbench.tasks.matchers import MATCHERS, NORMALIZERS, AnswerMatcher

FREE = Condition("unconstrained")


@pytest.mark.parametrize(
    ("matcher", "answer", "gold", "right"),
    [
        (AnswerMatcher(), "  berlin ", "Berlin", True),
        (AnswerMatcher(), "The capital of Germany is Berlin.", "Berlin", False),
        (AnswerMatcher("contains"), "The capital of Germany is Berlin.", "Berlin", True),
        (AnswerMatcher("contains"), "It has 17 days.", "7", False),  # word-bounded
        (AnswerMatcher("contains"), "a category", "cat", False),
        (AnswerMatcher("contains"), "New   York City", "new york", True),
        (AnswerMatcher("contains", "none"), "berlin", "Berlin", False),
        (AnswerMatcher("exact", "alnum"), "U.S.A.", "U S A", True),
        (AnswerMatcher("exact", "squad"), "The Beatles!", "beatles", True),
        (AnswerMatcher("exact", "none"), "Paris", "paris", False),
        (AnswerMatcher("regex"), "It is BERLIN, I think", r"\bberlin\b", True),
        (AnswerMatcher("regex", "none"), "It is BERLIN", "berlin", False),
        (AnswerMatcher("regex"), "Paris", "^(par|lyon)$", False),
        (AnswerMatcher("number"), "So the answer is 5.", "5", True),
        (AnswerMatcher("number"), "Answer: 1,000", "1000", True),
        (AnswerMatcher("number"), "3.14", "3.1416", False),
        (AnswerMatcher("number", tolerance=0.01), "3.14", "3.1416", True),
        (AnswerMatcher("number"), "no number here", "5", False),
    ],
)
def test_matchers(matcher: AnswerMatcher, answer: str, gold: str, right: bool) -> None:
    assert matcher.matches(answer, gold) is right


def test_every_listed_name_works() -> None:
    for match in MATCHERS:
        for normalize in NORMALIZERS:
            assert isinstance(AnswerMatcher(match, normalize).matches("5 x", "5"), bool)


def test_hostile_answers_stay_linear() -> None:
    # RE2 over a long model text with a pattern that backtracks in Python's re
    assert AnswerMatcher("regex").matches("a" * 50_000 + "!", "^(a+)+$") is False


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"match": "contain"}, "unknown match 'contain'.*did you mean 'contains'"),
        ({"normalize": "case"}, "unknown normalize 'case'"),
        ({"match": "exact", "tolerance": 0.5}, "tolerance applies to match 'number'"),
        ({"match": "number", "tolerance": -1}, "tolerance must be 0 or more"),
        ({"match": "number", "tolerance": "x"}, "tolerance must be a number"),
        ({"matcher": "exact"}, "no option 'matcher'.*did you mean 'match'"),
    ],
)
def test_bad_options_are_refused(params: dict[str, object], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        tasks.get("custom")(TaskOptions(dataset="x.jsonl", params=params))  # type: ignore[arg-type]


def _task(tmp_path: Path, lines: str, **params: object) -> CustomQaTask:
    path = tmp_path / "q.jsonl"
    path.write_text(lines, encoding="utf-8")
    task = tasks.get("custom")(TaskOptions(dataset=str(path), params=params))  # type: ignore[arg-type]
    assert isinstance(task, CustomQaTask)
    return task


def test_gold_answers_must_suit_the_matcher(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="line 2: answer 'five' is not a number"):
        _task(tmp_path, '{"question": "a", "answer": "5"}\n{"question": "b", "answer": "five"}\n',
              match="number").items()
    with pytest.raises(UsageError, match=r"line 1: answer '\(a' is not a regular expression"):
        _task(tmp_path, '{"question": "a", "answer": "(a"}\n', match="regex").items()


def test_the_task_scores_with_its_matcher_and_says_which(tmp_path: Path) -> None:
    line = '{"question": "Capital of Germany?", "answer": "Berlin"}\n'
    text = "The capital of Germany is Berlin."
    exact = _task(tmp_path, line)
    contains = _task(tmp_path, line, match="contains")
    (item,) = contains.items()
    assert not exact.score(item, FREE, text, False).correct
    assert contains.score(item, FREE, text, False).correct
    assert exact.correctness_label == "exact match"  # as before matchers existed
    assert contains.correctness_label == "contains match"
    assert contains.describe()["match"] == "contains" and contains.describe()["normalize"] == "casefold"
    number = _task(tmp_path, '{"question": "pi?", "answer": "3.14"}\n', match="number", tolerance=0.01)
    assert number.correctness_label == "number match (tolerance 0.01)"
    assert number.describe()["tolerance"] == 0.01
