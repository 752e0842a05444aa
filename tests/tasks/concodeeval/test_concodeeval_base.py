"""Shared ConCodeEval machinery: reading answers that continue the prompt's
open code fence, the truncation rule, shots and params."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from conformbench.errors import UsageError
from conformbench.records.items import TaskOptions
from conformbench.tasks.concodeeval.base import (
    continues_open_fence,
    parse_answer,
    truncated_sample,
)
from conformbench.tasks.concodeeval.generation import GenerationTask
from conformbench.tasks.concodeeval.validation import ValidationTask


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
    spec = TaskOptions(axes={"shots": (0, 3), "schema_formats": ("json",)})
    assert GenerationTask(spec).shot_counts == (0, 3)
    assert ValidationTask(spec).shot_counts == (0, 2)
    assert ValidationTask(TaskOptions(axes={"shots": (2, 3), "schema_formats": ("json",)})).shot_counts == (2,)
    with pytest.raises(UsageError, match="shots must be 0"):
        GenerationTask(TaskOptions(axes={"shots": (1,), "schema_formats": ("json",)}))


def test_params_and_formats_are_checked() -> None:
    assert GenerationTask(TaskOptions(params={"prompt": "qa1"})).params == {"prompt": "qa1", "system": "granite"}
    assert GenerationTask(TaskOptions(params={"prompt": "qa1", "system": "none"})).params["system"] == "none"
    with pytest.raises(UsageError, match="option system: Input should be a valid string"):
        ValidationTask(TaskOptions(params={"system": 3}))
    with pytest.raises(UsageError, match="listed twice"):
        ValidationTask(TaskOptions(axes={"schema_formats": ("json", "json")}))
    with pytest.raises(UsageError, match="has no option 'prompt'.*known: system"):
        ValidationTask(TaskOptions(params={"prompt": "qa1"}))


def _dataset_with_a_missing_format(tmp_path: Path, complete: int = 1) -> Path:
    """``complete`` schemas with every rendering (full0, full1...) and one
    without python ("p", the shortest, so shot ranking would pick it first),
    written by hand so the test does not depend on what the Pydantic
    renderer can express."""
    from conformbench.schemas.build import render_all
    from conformbench.schemas.case import InvalidInstance, SchemaCase, dump_case

    def case(ident: str, formats: tuple[str, ...], **extra: object) -> SchemaCase:
        schema = {"type": "object", "properties": {ident: {"type": "integer"}}, "required": [ident]}
        return SchemaCase(id=ident, schema=schema, renderings=render_all(schema, formats),
                          valid_instance={ident: 1}, **extra,  # type: ignore[arg-type]
                          invalid_instances=[InvalidInstance(keyword="required", schema_path="/required",
                                                             instance={})])

    cases = [case(f"full{i}", ("json", "yaml", "python")) for i in range(complete)]
    cases.append(case("p", ("json", "yaml"), missing_formats={"python": "keyword '$ref' is not supported"}))
    path = tmp_path / "dataset.jsonl"
    path.write_text("".join(dump_case(c) + "\n" for c in cases))
    return path


def test_a_missing_schema_format_skips_only_that_cell(tmp_path: Path) -> None:
    from conformbench.formats.base import UnrenderableSchemaError

    dataset = _dataset_with_a_missing_format(tmp_path)
    task = GenerationTask(TaskOptions(dataset=str(dataset),
                                      axes={"schema_formats": ("json", "python"), "output_formats": ("json",)}))
    items = {i.input["schema_id"]: i for i in task.items()}
    assert set(items) == {"full0", "p"}  # the item stays, for the cells it has
    full, partial = items["full0"], items["p"]
    assert "missing_formats" not in full.input  # complete items read as before
    assert partial.input["missing_formats"] == {"python": "keyword '$ref' is not supported"}
    assert set(partial.input["renderings"]) == {"json"}  # type: ignore[arg-type]
    by_format = {c.axis("schema_format"): c for c in task.conditions()}
    assert task.cell_exclusion(full, by_format["python"]) is None
    assert task.cell_exclusion(partial, by_format["json"]) is None
    reason = task.cell_exclusion(partial, by_format["python"])
    assert reason == "the python schema format cannot express this schema: keyword '$ref' is not supported"
    shown = task.prompt(partial, by_format["json"]).messages[-1].content
    assert partial.input["renderings"]["json"] in shown  # type: ignore[index]
    with pytest.raises(UnrenderableSchemaError, match=r"\$ref"):
        task.prompt(partial, by_format["python"])
    assert task.describe()["missing_formats"] == {"p": {"python": "keyword '$ref' is not supported"}}


def test_shots_come_only_from_schemas_with_every_format(tmp_path: Path) -> None:
    dataset = _dataset_with_a_missing_format(tmp_path, complete=3)
    task = ValidationTask(TaskOptions(dataset=str(dataset),
                                      axes={"schema_formats": ("json", "python"), "output_formats": ("json",),
                                            "shots": (2,)}))
    items = task.items()
    assert {i.input["schema_id"] for i in items} == {"full0", "full1", "full2", "p"}
    shot_ids = {s for i in items for s in i.meta["shot_ids"]}  # type: ignore[union-attr]
    assert shot_ids and "p" not in shot_ids


def test_items_do_not_carry_the_python_inexact_keywords(tmp_path: Path) -> None:
    """Replays resume by item equality: a dataset whose records list the
    python rendering's inexact keywords gives the very items it gave before."""
    from conformbench.schemas.build import BuildOptions, build_dataset
    from conformbench.schemas.case import dump_case

    src = tmp_path / "src"
    src.mkdir()
    (src / "price.json").write_text(json.dumps({"type": "object", "required": ["price", "at"], "properties": {
        "price": {"type": "number", "multipleOf": 0.01}, "at": {"type": "string", "format": "time"}}}))
    (src / "plain.json").write_text(json.dumps({"type": "integer", "maximum": 3}))
    built = build_dataset(BuildOptions(out=tmp_path / "with", schemas=src))
    assert any(c.python_inexact for c in built.cases)
    without = tmp_path / "without" / "dataset.jsonl"
    without.parent.mkdir()
    without.write_text("".join(dump_case(c.model_copy(update={"python_inexact": []})) + "\n" for c in built.cases))
    for task in (GenerationTask, ValidationTask):
        options = TaskOptions(axes={"schema_formats": ("json", "python"), "output_formats": ("json",)})
        items = task(replace(options, dataset=str(tmp_path / "with"))).items()
        assert items == task(replace(options, dataset=str(without))).items() and items
