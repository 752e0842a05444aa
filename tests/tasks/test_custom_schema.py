"""Task custom with the user's own schema (``--schema FILE``): read as data
in its format, never executed; the answer field named or inferred."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformbench.errors import UsageError
from conformbench.records.items import Condition, Item, TaskOptions
from conformbench.tasks.custom import CustomQaTask
from conformbench.tasks.custom_schema import answer_field_of, read_schema_file
from conformbench.tasks.grid import arm_conditions

SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"},
                                           "confidence": {"type": "number", "minimum": 0, "maximum": 1}},
          "required": ["answer", "confidence"]}


def test_json_yaml_and_xml_files_read_as_the_same_schema(tmp_path: Path) -> None:
    from conformbench.formats.base import schema_formats

    for fmt, suffix in (("json", ".json"), ("yaml", ".yaml"), ("xml", ".xml")):
        path = tmp_path / f"s{suffix}"
        path.write_text(schema_formats.get(fmt)().render(SCHEMA), encoding="utf-8")
        assert read_schema_file(path) == SCHEMA


def test_a_pydantic_file_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "model.py"
    path.write_text("raise SystemExit('executed')\n", encoding="utf-8")
    with pytest.raises(UsageError, match="never executes user Python"):
        read_schema_file(path)


def test_the_answer_field_is_named_or_inferred() -> None:
    assert answer_field_of(SCHEMA, None) == "answer"
    other = {"type": "object", "properties": {"city": {"type": "string"}, "note": {"type": "string"}},
             "required": ["city"]}
    assert answer_field_of(other, None) == "city"
    two = {**other, "required": ["city", "note"]}
    with pytest.raises(UsageError, match=r"--answer-field \(candidates: city, note\)"):
        answer_field_of(two, None)
    assert answer_field_of(two, "note") == "note"
    with pytest.raises(UsageError, match="not a property"):
        answer_field_of(two, "nope")


def test_the_task_uses_the_schema_and_reads_a_number_answer(tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    task = CustomQaTask(TaskOptions(params={"schema": schema, "match": "number"}))
    item = Item(id="q1", input={"question": "2+2?"}, target="4")
    assert task.schema(item, "answer") == schema
    assert task.default_arm_specs()  # the arms without [S] take the contract 'answer'
    cond = next(c for c in arm_conditions(task, "constrained", {}) if c.arm == "constrained")
    assert isinstance(cond, Condition)
    scored = task.score(item, cond, json.dumps({"n": 4}), False)
    assert scored.correct is True
