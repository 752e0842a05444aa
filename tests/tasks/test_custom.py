"""Custom exact-match JSONL task and the examples/custom_task.py example."""

from __future__ import annotations

import importlib.util
import inspect
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from conformbench.errors import UsageError
from conformbench.records.items import Condition, TaskOptions
from conformbench.tasks.base import tasks
from conformbench.tasks.custom import CustomQaTask

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"

FREE = Condition("unconstrained")
CONSTRAINED = Condition("constrained", "answer", "llguidance")
PACKAGED = Condition("reason_then_constrain", "answer", "llguidance")


def _task(path: Path | str | None, **kwargs: object) -> CustomQaTask:
    dataset = None if path is None else str(path)
    task = tasks.get("custom")(TaskOptions(dataset=dataset, **kwargs))  # type: ignore[arg-type]
    assert isinstance(task, CustomQaTask)
    return task


def test_loads_the_example_questions() -> None:
    task = _task(EXAMPLES / "questions.jsonl")
    items = task.items()
    assert len(items) == 6
    assert items[0].id == "q1" and items[0].target == "Paris"
    assert [c.key for c in task.conditions()] == [
        "unconstrained", "prompt_only[answer]", "constrained[answer]@llguidance",
        "reason_then_constrain[answer]@llguidance"]


def test_ids_from_the_file(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"id": "a", "question": "Q?", "answer": "A"}\n\n'
                    '{"question": "R?", "answer": "B"}\n', encoding="utf-8")
    assert [i.id for i in _task(path).items()] == ["a", "q3"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"question": "Q?", "answer": "A"}\n{"question": "Q?"', "line 2 is not JSON"),
        ('["Q?", "A"]\n', "line 1: expected an object"),
        ('{"question": "Q?"}\n', "line 1: 'answer' must be a non-empty string"),
        ('{"question": "Q?", "answer": 5}\n', "line 1: 'answer' must be a non-empty string"),
        ('{"question": "", "answer": "A"}\n', "line 1: 'question' must be a non-empty string"),
        ('{"question": "Q?", "answer": "A", "hint": "x"}\n', "line 1: unknown key 'hint'"),
        ('{"id": "x", "question": "Q?", "answer": "A"}\n{"id": "x", "question": "R?", "answer": "B"}\n',
         "line 2: duplicate id 'x'"),
        ("\n\n", "has no questions"),
        (b"\xff\xfe".decode("latin-1"), "not JSON"),
    ],
)
def test_malformed_files(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(UsageError, match=message) as caught:
        _task(path).items()
    assert "\n" not in str(caught.value)


def test_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="cannot read"):
        _task(tmp_path / "missing.jsonl").items()
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(UsageError, match="not UTF-8"):
        _task(binary).items()
    with pytest.raises(UsageError, match="needs a dataset"):
        _task(None).items()


def test_scoring_is_normalised_exact_match() -> None:
    task = _task(EXAMPLES / "questions.jsonl")
    item = task.items()[0]  # Paris
    cases = [
        (FREE, "  paris\n", None, True),
        (FREE, "I think so.\nAnswer: PARIS", None, True),
        (FREE, "The capital of France is Paris.", None, False),
        (FREE, "", None, False),
        (CONSTRAINED, '{"answer": "paris"}', True, True),
        (CONSTRAINED, '{"answer": "Lyon"}', True, False),
        (CONSTRAINED, '{"answer": ["Paris"]}', False, False),
        (CONSTRAINED, '{"answer": "Paris", "x": 1}', False, True),
        (PACKAGED, "Paris", False, False),
    ]
    for condition, text, valid, correct in cases:
        scored = task.score(item, condition, text, truncated=False)
        assert (scored.valid, scored.correct) == (valid, correct), text


def test_scoring_needs_no_dataset() -> None:
    # replays carry the items, so a task rebuilt for scoring never reads the file
    from conformbench.records.items import Item

    task = _task("/nonexistent/questions.jsonl")
    item = Item(id="q1", input={"question": "Capital of France?"}, target="Paris")
    assert task.score(item, CONSTRAINED, '{"answer": "Paris"}', False).correct is True


# ----------------------------------------------------------------- the example


def _example() -> ModuleType:
    name = "conformbench_example_custom_task"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, EXAMPLES / "custom_task.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def test_example_task_registers_and_scores() -> None:
    module = _example()
    cls = tasks.get("example-qa")
    assert cls is module.ExampleQa
    assert len(inspect.getsource(cls).splitlines()) <= 35  # "a task in about 30 lines"
    task = cls(TaskOptions(dataset=str(EXAMPLES / "questions.jsonl")))
    items = task.items()
    assert len(items) == 6
    assert task.contracts == ("answer",) and task.answer_contract == "answer"
    assert task.score(items[0], FREE, "Answer: Paris", False).correct is True
    assert task.score(items[0], CONSTRAINED, '{"answer": "Paris"}', False).valid is True
    assert json.dumps(task.schemas["answer"], indent=2) in task.prompt(items[0], CONSTRAINED).messages[0].content


@pytest.mark.long
@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama_cpp is not importable")
def test_example_runs_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code = _example().main([str(EXAMPLES / "questions.jsonl"), "--n=1"])
    assert code == 0
    report = json.loads((tmp_path / "conformbench-out" / "example-qa" / "report.json").read_text(encoding="utf-8"))
    assert report["results"][0]["task"] == "example-qa"
    assert report["results"][0]["n"] == 1


def test_a_broken_line_names_one_line_and_its_column(tmp_path: Path) -> None:
    """The file's line number, then the column within it: json's own
    "line 1 column 30" was a second, different line in one message (#58)."""
    path = tmp_path / "q.jsonl"
    path.write_text('{"question": "Q?", "answer": "A"}\n{"question": "Q?", "answer": }\n', encoding="utf-8")
    with pytest.raises(UsageError) as caught:
        _task(path).items()
    assert str(caught.value).endswith("line 2 is not JSON: Expecting value at column 30")
    assert str(caught.value).removeprefix(str(path)).count("line") == 1
