"""Shared ConCodeEval machinery: reading answers that continue the prompt's
open code fence, the truncation rule, shots and params."""

from __future__ import annotations

import pytest

from conformbench.errors import UsageError
from conformbench.records.items import TaskOptions
from conformbench.tasks.concodeeval_base import (
    continues_open_fence,
    parse_answer,
    truncated_sample,
)
from conformbench.tasks.concodeeval_generation import GenerationTask
from conformbench.tasks.concodeeval_validation import ValidationTask


@pytest.mark.parametrize(("text", "expected"), [
    ('{"a": 1}\n```', True),                       # closes the prompt's fence
    ("a: 1\n```\nThis sample follows.", True),
    ('```json\n{"a": 1}\n```', False),             # opens its own block
    ('Here it is:\n```\n{"a": 1}\n```', False),     # a balanced block of its own
    ('Here it is:\n```json\n{"a": 1', False),       # an opener (language), unclosed
    ('{"a": 1}', False),                           # no fence at all
    ('json\n{"a": 1}', True),                      # completes the fence line (raw prompt)
    ('JSON\n{"a": 1}\n```\nDone.', True),          # the same, then closes that block
    ('Sure\n{"a": 1}', False),                     # a word is not an info string
])
def test_continues_open_fence(text: str, expected: bool) -> None:
    assert continues_open_fence(text) is expected


def test_parse_answer_reads_the_inside_of_the_prompts_fence() -> None:
    parsed, continued = parse_answer("yaml", "a: 1\n```\nThis sample follows.", None)
    assert continued and parsed.ok and parsed.value == {"a": 1}
    parsed, continued = parse_answer("json", 'Here:\n```json\n{"a": 1}\n```', None)
    assert not continued and parsed.value == {"a": 1}


def test_a_base_models_language_tag_completes_the_prompts_fence_line() -> None:
    # a raw prompt ends with "```"; Gemma 3 270M answers 'json\n{...}\n```'
    for text in ('json\n{"a": 1}\n```\nMore prose.', 'yaml\na: 1\n'):
        fmt = text.split("\n", 1)[0]
        parsed, continued = parse_answer(fmt, text, None)
        assert continued and parsed.ok and parsed.value == {"a": 1}, text
    parsed, continued = parse_answer("json", 'Sure\n{"a": 1}', None)
    assert not continued and not parsed.ok


def test_truncated_sample_rule() -> None:
    assert not truncated_sample(False, "3000000", False)
    assert truncated_sample(True, "3000000", False)
    assert truncated_sample(True, "```json\n3000000", False)
    assert not truncated_sample(True, "```json\n3\n```\nmore", False)
    assert not truncated_sample(True, "3\n```\nmore", True)


def test_shot_values_map_to_each_tasks_paper_count() -> None:
    spec = TaskOptions(shots=(0, 3), schema_formats=("json",))
    assert GenerationTask(spec).shot_counts == (0, 3)
    assert ValidationTask(spec).shot_counts == (0, 2)
    assert ValidationTask(TaskOptions(shots=(2, 3), schema_formats=("json",))).shot_counts == (2,)
    with pytest.raises(UsageError, match="shots must be 0"):
        GenerationTask(TaskOptions(shots=(1,), schema_formats=("json",)))


def test_params_and_formats_are_checked() -> None:
    assert GenerationTask(TaskOptions(params={"prompt": "qa1"})).params == {"prompt": "qa1", "system": "granite"}
    assert GenerationTask(TaskOptions(params={"prompt": "qa1", "system": "none"})).params["system"] == "none"
    with pytest.raises(UsageError, match="must be a string"):
        ValidationTask(TaskOptions(params={"system": 3}))
    with pytest.raises(UsageError, match="listed twice"):
        ValidationTask(TaskOptions(schema_formats=("json", "json")))
    with pytest.raises(UsageError, match="unknown param 'prompt'"):
        ValidationTask(TaskOptions(params={"prompt": "qa1"}))
