"""What a repair turn of the ConCodeEval generation task is fed: the output
format's own reading and the item schema's validator (YAML here), the same
ones that score the answer."""

from __future__ import annotations

from conformbench.arms import feedback_request
from conformbench.records.items import Condition, TaskOptions
from conformbench.tasks.concodeeval.generation import GenerationTask


def _task() -> GenerationTask:
    return GenerationTask(TaskOptions(n=2, arms=("repair",),
                                      axes={"schema_formats": ("json",), "output_formats": ("yaml",)}))


def test_a_wrong_yaml_answer_is_fed_back_with_the_validators_errors() -> None:
    task = _task()
    (cond,) = task.conditions()
    assert cond == Condition.of("repair", "schema", None, {"schema_format": "json", "output_format": "yaml", "shots": 0})
    item = task.items()[0]
    text = "```yaml\n- 1\n- 2\n```"  # a list where the schema wants another type
    verdict = task.verdict(item, cond, text, truncated=False)
    assert verdict.valid is False and task.score(item, cond, text, False).valid is False
    assert verdict.errors[0].instance_path == "" and verdict.errors[0].keyword == "type"
    assert verdict.errors[0].message.startswith("[1, 2] is not of type ")
    request = feedback_request(verdict, "YAML")
    assert "- at (root): type: " in request and request.endswith("Reply with only the corrected YAML.")


def test_an_unreadable_answer_is_one_parse_error() -> None:
    task = _task()
    (cond,) = task.conditions()
    verdict = task.verdict(task.items()[0], cond, "```yaml\nkey: [unclosed\n```", truncated=False)
    assert verdict.valid is False
    assert [e.keyword for e in verdict.errors] == ["parse"] and "yaml" in verdict.errors[0].message.lower()
