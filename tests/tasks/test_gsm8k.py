"""GSM8K task: shipped data, gold parsing, conditions, prompts, scoring, and
(slow) one live generation per arm through the embedded model."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from conformbench.errors import UsageError
from conformbench.records.generation import GenerationRequest
from conformbench.records.items import Condition, Item, TaskOptions
from conformbench.tasks.base import tasks
from conformbench.tasks.gsm8k import (
    ANSWER_SCHEMA,
    REASONING_SCHEMA,
    Gsm8kTask,
    parse_gold,
)

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "src" / "conformbench" / "data"
SHARED = REPO.parent / "shared" / "data"

FREE = Condition("unconstrained")
PROMPT_ONLY = Condition("prompt_only", "answer")
CONSTRAINED = Condition("constrained", "answer", "llguidance")
REASONING = Condition("constrained", "reasoning", "llguidance")
PACKAGED = Condition("reason_then_constrain", "answer", "llguidance")


def _task(**kwargs: object) -> Gsm8kTask:
    task = tasks.get("gsm8k")(TaskOptions(**kwargs))  # type: ignore[arg-type]
    assert isinstance(task, Gsm8kTask)
    return task


def test_all_gold_answers_parse() -> None:
    items = _task().items()
    assert len(items) == 1319
    assert items[0].id == "gsm8k_test_0" and items[0].target == 18
    assert items[-1].id == "gsm8k_test_1318"
    assert all(type(item.target) is int for item in items)
    # commas are removed (e.g. '#### 2,125')
    lines = (DATA / "gsm8k" / "test.jsonl").read_text(encoding="utf-8").splitlines()
    with_commas = [i for i, line in enumerate(lines) if "," in json.loads(line)["answer"].rsplit("#### ", 1)[1]]
    assert len(with_commas) == 14
    assert all(items[i].target >= 1000 for i in with_commas)
    assert min(item.target for item in items) == -10


def test_parse_gold() -> None:
    assert parse_gold("so 2 + 2 = 4\n#### 1,450,000") == 1450000
    assert parse_gold("#### -10") == -10
    with pytest.raises(ValueError):
        parse_gold("no mark")
    with pytest.raises(ValueError):
        parse_gold("#### 2.5")


@pytest.mark.skipif(not SHARED.is_dir(), reason="a maintainer check: compares the shipped GSM8K files with the original download, which is not on this machine (../shared/data)")
def test_shipped_data_is_byte_for_byte() -> None:
    for name in ("test.jsonl", "LICENSE"):
        assert (DATA / "gsm8k" / name).read_bytes() == (SHARED / "gsm8k" / name).read_bytes()


def test_first_n_items_are_deterministic() -> None:
    first = [i.id for i in _task(n=5).items()]
    assert first == [f"gsm8k_test_{k}" for k in range(5)]
    assert _task(n=5, seed=7).items() == _task(n=5).items()
    with pytest.raises(UsageError, match="1319 items"):
        _task(n=5000).items()


def test_contracts_keep_reasoning_first() -> None:
    task = _task()
    assert task.contracts == ("answer", "reasoning")
    assert task.answer_contract == "answer"
    assert list(REASONING_SCHEMA["properties"]) == ["reasoning", "answer"]
    item = task.items()[0]
    assert task.contract_schema(item, REASONING) == REASONING_SCHEMA
    assert task.contract_schema(item, CONSTRAINED) == ANSWER_SCHEMA
    assert task.contract_schema(item, FREE) is None
    text = task.prompt(item, REASONING).messages[-1].content
    assert text.index('"reasoning"') < text.index('"answer"')


def test_default_conditions() -> None:
    keys = [c.key for c in _task(engines=("llguidance", "gbnf")).conditions()]
    assert keys == [
        "unconstrained",
        "prompt_only[answer]",
        "constrained[answer]@llguidance",
        "constrained[answer]@gbnf",
        "prompt_only[reasoning]",
        "constrained[reasoning]@llguidance",
        "constrained[reasoning]@gbnf",
        "reason_then_constrain[answer]@llguidance",
        "reason_then_constrain[answer]@gbnf",
    ]


def test_arm_selection_and_errors() -> None:
    keys = [c.key for c in _task(arms=("unconstrained", "constrained[reasoning]")).conditions()]
    assert keys == ["unconstrained", "constrained[reasoning]@llguidance"]
    keys = [c.key for c in _task(arms=("constrained",)).conditions()]
    assert keys == ["constrained[answer]@llguidance", "constrained[reasoning]@llguidance"]
    with pytest.raises(UsageError, match="did you mean 'constrained'"):
        _task(arms=("constraned",)).conditions()
    with pytest.raises(UsageError, match="did you mean 'reasoning'"):
        _task(arms=("constrained[reasonin]",)).conditions()
    with pytest.raises(UsageError, match="takes no contract"):
        _task(arms=("unconstrained[answer]",)).conditions()
    with pytest.raises(UsageError, match="no engine"):
        _task(arms=("constrained",), engines=()).conditions()
    with pytest.raises(UsageError, match="no option 'temperatur'"):
        _task(params={"temperatur": 1})
    with pytest.raises(UsageError, match="takes no dataset"):
        _task(dataset="x.jsonl")
    with pytest.raises(UsageError, match="gsm8k has no axis chosen by 'schema_formats'"):
        _task(axes={"schema_formats": ("yaml",)})


def test_prompts() -> None:
    task = _task(n=1)
    item = task.items()[0]
    free = task.prompt(item, FREE)
    # reason_then_constrain's free step is asked as the unconstrained turn
    assert free == task.turn_prompt(item, PACKAGED, "free")
    assert "Answer: <number>" in free.messages[0].content
    assert "JSON Schema" not in free.messages[0].content
    # the grammar is the only difference between prompt_only and constrained
    assert task.prompt(item, PROMPT_ONLY) == task.prompt(item, CONSTRAINED)
    assert json.dumps(ANSWER_SCHEMA, indent=2) in task.prompt(item, CONSTRAINED).messages[0].content
    packaging = task.packaging_prompt(item, PACKAGED, "16 - 3 - 4 = 9; 9 * 2 = 18")
    roles = [m.role for m in packaging.messages]
    assert roles == ["user", "assistant", "user"]
    assert packaging.messages[1].content == "16 - 3 - 4 = 9; 9 * 2 = 18"
    assert json.dumps(ANSWER_SCHEMA, indent=2) in packaging.messages[2].content


@pytest.mark.parametrize(
    ("condition", "text", "valid", "correct"),
    [
        (FREE, "9 eggs * $2 = $18.\nAnswer: 18", None, True),
        (FREE, "\\boxed{18}", None, True),
        (FREE, "Answer: 18.00", None, True),
        (FREE, "Answer: 17", None, False),
        (FREE, "", None, False),
        (CONSTRAINED, '{"answer": 18}', True, True),
        (CONSTRAINED, '{"answer": 18.0}', True, True),
        (CONSTRAINED, '```json\n{"answer": 18}\n```', True, True),
        (CONSTRAINED, '{"answer": 17}', True, False),
        (CONSTRAINED, '{"answer": "18"}', False, False),
        (CONSTRAINED, '{"answer": true}', False, False),
        (CONSTRAINED, '{"answer": 18, "unit": "$"}', False, True),
        (CONSTRAINED, '{"answer": 1', False, False),
        (CONSTRAINED, "[18]", False, False),
        (REASONING, '{"reasoning": "9 * 2", "answer": 18}', True, True),
        (REASONING, '{"answer": 18}', False, True),
        (PACKAGED, '{"answer": 18}', True, True),
    ],
)
def test_score(condition: Condition, text: str, valid: bool | None, correct: bool) -> None:
    task = _task(n=1)
    item = task.items()[0]
    scored = task.score(item, condition, text, truncated=True)
    assert (scored.valid, scored.correct, scored.truncated) == (valid, correct, True)


def test_score_records_violations_and_answer() -> None:
    task = _task(n=1)
    item = task.items()[0]
    scored = task.score(item, CONSTRAINED, '{"answer": 18, "unit": "$"}', truncated=False)
    assert [v.keyword for v in scored.violations] == ["additionalProperties"]
    assert scored.answer == 18 and scored.root_type_ok is True
    free = task.score(item, FREE, "\\boxed{1400} bananas to last for 2 months", False)
    assert free.answer == 1400 and free.note == "read from boxed"
    bad = task.score(item, CONSTRAINED, "not json", False)
    assert bad.parsed is False and bad.note


def test_score_never_raises_on_hostile_text() -> None:
    task = _task(n=1)
    item = task.items()[0]
    texts = ["", "\x00", "\ud800", "[" * 100_000, '{"answer": ' * 50_000, "9" * 10_000,
             '{"answer": 1e999}', '{"answer": ' + "9" * 5000 + "}", "\\boxed{" * 10_000]
    for condition in (FREE, CONSTRAINED, REASONING, PACKAGED):
        for text in texts:
            scored = task.score(item, condition, text, truncated=False)
            assert scored.correct is False
            assert scored.note is None or not scored.note.startswith("scoring error"), scored.note


def test_item_round_trips_through_a_replay_record() -> None:
    # scoring rebuilds items from replays: everything score needs is in the Item
    from conformbench.records.replay import ItemRecord

    item = _task(n=1).items()[0]
    record = ItemRecord(task="gsm8k", item=item)
    again = ItemRecord.model_validate_json(record.model_dump_json()).item
    assert isinstance(again, Item)
    assert _task().score(again, FREE, "Answer: 18", False).correct is True


# ----------------------------------------------------------------- live (slow)


def _llama_ready() -> bool:
    return importlib.util.find_spec("llama_cpp") is not None


@pytest.mark.long
@pytest.mark.slow
@pytest.mark.skipif(not _llama_ready(), reason="llama_cpp is not importable")
def test_one_live_generation_per_arm() -> None:
    from conformbench.backends.base import backends
    from conformbench.records.generation import BackendConfig, Constraint, DecodingSettings

    task = _task(n=1)
    item = task.items()[0]
    backend = backends.get("llamacpp")(BackendConfig())
    settings = DecodingSettings(max_tokens=48)
    try:
        free_text = None
        for condition in task.conditions():
            schema = task.contract_schema(item, condition)
            if condition.arm == "reason_then_constrain":
                assert free_text is not None
                prompt = task.packaging_prompt(item, condition, free_text)
            else:
                prompt = task.prompt(item, condition)
            constraint = None
            if condition.engine is not None and schema is not None:
                constraint = Constraint(schema=schema, engine=condition.engine)
            result = backend.generate(GenerationRequest(prompt, settings, constraint))
            assert result.finish_reason in ("stop", "length"), result.error
            if condition.arm == "unconstrained":
                free_text = result.text
            scored = task.score(item, condition, result.text, result.finish_reason == "length")
            assert scored.note is None or not scored.note.startswith("scoring error")
            if condition.arm == "constrained" and not scored.truncated:
                # the grammar was applied: the output is valid against S
                assert scored.valid is True, result.text
    finally:
        backend.close()
