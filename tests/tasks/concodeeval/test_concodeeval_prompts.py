"""The ConCodeEval prompt texts against golden files (tests/tasks/concodeeval/golden/).

Items are written by hand (fixed renderings) so the goldens pin the prompt
templates alone. Regenerate after a deliberate template change with
CONFORMBENCH_UPDATE_GOLDEN=1 and review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conformbench.errors import UsageError
from conformbench.records.items import Condition, Item, TaskOptions
from conformbench.records.prompt import Prompt
from conformbench.tasks.concodeeval.generation import GenerationTask
from conformbench.tasks.concodeeval.prompts import (
    PromptStyle,
    display_name,
    generation_prompt,
)
from conformbench.tasks.concodeeval.shots import Shot
from conformbench.tasks.concodeeval.validation import ValidationTask

GOLDEN = Path(__file__).parent / "golden"

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer", "maximum": 9}}, "required": ["n"]}
RENDER = {
    "json": '{\n  "type": "object",\n  "properties": {"n": {"type": "integer", "maximum": 9}},\n  "required": ["n"]\n}',
    "yaml": "type: object\nproperties:\n  n:\n    type: integer\n    maximum: 9\nrequired:\n- n",
    "xml": '<schema>\n  <type type="str">object</type>\n</schema>',
}
ARRAY = {"type": "array", "items": {"type": "boolean"}, "minItems": 1}
ARRAY_RENDER = {"json": '{"type": "array", "items": {"type": "boolean"}, "minItems": 1}',
                "yaml": "type: array\nitems:\n  type: boolean\nminItems: 1", "xml": "<schema/>"}


def _shot(answer: str | None, instance: object, keyword: str | None = None) -> dict[str, object]:
    return Shot("s_array", ARRAY, ARRAY_RENDER, instance, answer, keyword, "array root").to_json()


def _gen_item() -> Item:
    shots = [_shot(None, [True]), _shot(None, [False, True]), _shot(None, [True, True])]
    return Item("cc_s1", {"schema_id": "s1", "schema": SCHEMA, "renderings": RENDER, "shots": shots})


def _val_item() -> Item:
    shots = [_shot("yes", [True]), _shot("no", [], "minItems")]
    return Item("s1:maximum", {"schema_id": "s1", "schema": SCHEMA, "renderings": RENDER,
                               "instance": {"n": 12}, "shots": shots}, "no")


def _text(prompt: Prompt) -> str:
    return "".join(f"=== {m.role} ===\n{m.content}\n" for m in prompt.messages)


def _check(name: str, prompt: Prompt) -> None:
    path = GOLDEN / f"{name}.txt"
    if os.environ.get("CONFORMBENCH_UPDATE_GOLDEN"):
        path.write_text(_text(prompt), encoding="utf-8")
    assert _text(prompt) == path.read_text(encoding="utf-8")


CASES = [
    ("gen_json_json_common", "generation", {}, Condition.of("prompt_only", "schema", None, {"schema_format": "json", "output_format": "json", "shots": 0})),
    ("gen_yaml_xml_qa2", "generation", {"prompt": "qa2"}, Condition.of("prompt_only", "schema", None, {"schema_format": "yaml", "output_format": "xml", "shots": 0})),
    ("gen_json_yaml_3shot", "generation", {}, Condition.of("prompt_only", "schema", None, {"schema_format": "json", "output_format": "yaml", "shots": 3})),
    ("val_xml_json_plain", "validation", {}, Condition.of("unconstrained", None, None, {"schema_format": "xml", "output_format": "json", "shots": 0})),
    ("val_yaml_yaml_json_2shot", "validation", {},
     Condition.of("constrained", "answer", "llguidance", {"schema_format": "yaml", "output_format": "yaml", "shots": 2})),
]


@pytest.mark.parametrize(("name", "task", "params", "cond"), CASES, ids=[c[0] for c in CASES])
def test_prompt_golden(name: str, task: str, params: dict[str, object], cond: Condition) -> None:
    options = TaskOptions(axes={"schema_formats": ("json", "yaml", "xml"), "shots": (0, 3)}, params=params)
    if task == "generation":
        _check(name, GenerationTask(options).prompt(_gen_item(), cond))
    else:
        _check(name, ValidationTask(options).prompt(_val_item(), cond))


def test_prompt_only_and_constrained_differ_only_by_grammar() -> None:
    task = ValidationTask(TaskOptions(arms=("prompt_only", "constrained"), axes={"schema_formats": ("json",)}))
    base = Condition.of("prompt_only", "answer", None, {"schema_format": "json", "output_format": "yaml", "shots": 0})
    grammar = Condition.of("constrained", "answer", "llguidance", {"schema_format": "json", "output_format": "yaml", "shots": 0})
    assert task.prompt(_val_item(), base) == task.prompt(_val_item(), grammar)
    plain = task.prompt(_val_item(), Condition.of("unconstrained", None, None, {"schema_format": "json", "output_format": "yaml", "shots": 0}))
    assert plain.messages[-1].content.endswith("Respond with yes or no.\nAnswer:\n```")


def test_packaging_turn_carries_the_free_answer() -> None:
    task = ValidationTask(TaskOptions(arms=("unconstrained", "reason_then_constrain"),
                                      axes={"schema_formats": ("json",)}))
    cond = Condition.of("reason_then_constrain", "answer", "llguidance", {"schema_format": "json", "output_format": "json", "shots": 0})
    prompt = task.packaging_prompt(_val_item(), cond, "No: n exceeds 9.")
    roles = [m.role for m in prompt.messages]
    assert roles == ["user", "assistant", "user"]
    assert prompt.messages[1].content == "No: n exceeds 9."
    assert '{"answer": "yes"} or {"answer": "no"}' in prompt.messages[2].content


def test_unknown_prompt_variant_and_format_are_rejected() -> None:
    with pytest.raises(UsageError, match=r"unknown prompt 'qa' \(did you mean"):
        GenerationTask(TaskOptions(params={"prompt": "qa"}, axes={"schema_formats": ("json",)}))
    with pytest.raises(UsageError, match=r"has no option 'promt' \(did you mean 'prompt'"):
        GenerationTask(TaskOptions(params={"promt": "qa1"}, axes={"schema_formats": ("json",)}))
    with pytest.raises(UsageError, match="unknown system prompt"):
        ValidationTask(TaskOptions(params={"system": "grnite"}, axes={"schema_formats": ("json",)}))
    with pytest.raises(UsageError):
        generation_prompt(PromptStyle("json", "json", variant="qa3"), "{}")
    with pytest.raises(UsageError, match="did you mean 'yaml'"):
        display_name("yml")
