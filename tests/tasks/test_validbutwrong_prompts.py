"""Prompt style ``validbutwrong``: byte-for-byte validbutwrong 0.1.1's
prompts and schemas (checked against the installed package, a test extra),
and the task option that selects it."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from conformbench.errors import UsageError
from conformbench.records.items import Condition, TaskOptions
from conformbench.tasks import validbutwrong_prompts
from conformbench.tasks.base import tasks
from conformbench.tasks.contract_task import ContractTask

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CONTRACTS = {"gsm8k": ("answer", "reasoning"), "bfcl-simple": ("arguments",)}


def _task(name: str, style: str | None = "validbutwrong") -> ContractTask:
    params: dict[str, Any] = {} if style is None else {"prompt_style": style}
    task = tasks.get(name)(TaskOptions(params=params, engines=("outlines",)))
    assert isinstance(task, ContractTask)
    return task


@pytest.mark.parametrize("name", sorted(CONTRACTS))
def test_every_prompt_is_validbutwrongs_own(name: str) -> None:
    cli = pytest.importorskip("validbutwrong.cli")
    theirs = cli.make_task(name)
    ours = _task(name)
    items = {item.id: item for item in ours.items()}
    their_items = theirs.items()
    checked = 0
    for their_item in their_items:
        item = items[their_item.id]
        schemas = theirs.schemas_for(their_item)
        free = ours.prompt(item, Condition("unconstrained")).messages
        assert [(m.role, m.content) for m in free] == [("user", theirs.free_prompt(their_item))]
        for contract in CONTRACTS[name]:
            for condition in (Condition("prompt_only", contract),
                              Condition("constrained", contract, "outlines")):
                assert ours.contract_schema(item, condition) == schemas[contract]
                (message,) = ours.prompt(item, condition).messages
                assert message.content == theirs.json_prompt(their_item, schemas[contract])
        packaging = Condition("reason_then_constrain", theirs.answer_schema, "outlines")
        turns = ours.packaging_prompt(item, packaging, "free text").messages
        assert [m.role for m in turns] == ["user", "assistant", "user"]
        assert turns[1].content == "free text"
        assert turns[2].content == theirs.package_prompt(their_item, schemas[theirs.answer_schema])
        checked += 1
    assert checked == len(their_items) >= 200


def test_schema_display_is_one_json_line_in_key_order() -> None:
    task = _task("bfcl-simple")
    item = task.items()[0]
    schema = task.contract_schema(item, Condition("constrained", "arguments", "outlines"))
    assert schema is not None
    prompt = task.prompt(item, Condition("prompt_only", "arguments")).messages[0].content
    assert prompt.endswith("\n" + json.dumps(schema))
    assert list(schema) == ["type", "properties", "additionalProperties", "required"]
    assert json.dumps(item.input["function"]) in prompt


def test_bfcl_schema_conversion_rules() -> None:
    spec = {"type": "dict", "properties": {
        "x": {"type": "any", "description": "d", "default": 1},
        "t": {"type": "tuple", "items": {"type": "float"}, "optional": True},
        "o": {"type": "dict", "properties": {}, "required": []}}, "required": ["x"]}
    assert validbutwrong_prompts.bfcl_schema(spec) == {
        "type": "object",
        "properties": {
            "x": {"type": ["string", "number", "integer", "boolean", "array", "object", "null"],
                  "description": "d"},
            "t": {"type": "array", "items": {"type": "number"}},
            "o": {"type": "object", "properties": {}, "additionalProperties": False}},
        "additionalProperties": False,
        "required": ["x"]}


def _meaning(schema: Any) -> Any:
    """A schema with what cannot change validation removed: annotations,
    and ``integer`` in a type list that has ``number`` (a subset)."""
    if isinstance(schema, list):
        return [_meaning(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _meaning(v) for k, v in schema.items() if k not in ("description", "default")}
    if isinstance(out.get("type"), list):
        kinds = set(out["type"])
        out["type"] = sorted(kinds - {"integer"} if "number" in kinds else kinds)
    if "properties" in out:  # property names are data here, not keywords
        out["properties"] = {k: _meaning(v) for k, v in schema["properties"].items()}
    return out


def test_validbutwrong_schemas_mean_what_ours_mean() -> None:
    """The two conversions of a BFCL function differ in annotations only, so
    the style cannot change which outputs are valid."""
    ours, theirs = _task("bfcl-simple", None), _task("bfcl-simple")
    condition = Condition("constrained", "arguments", "outlines")
    differ = 0
    for item in ours.items():
        mine, other = ours.contract_schema(item, condition), theirs.contract_schema(item, condition)
        assert _meaning(mine) == _meaning(other), item.id
        differ += mine != other
    assert differ > 0  # 57 of 400 differ as data (a kept `default`, the `any` union)


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama_cpp is not importable")
def test_engines_compile_every_validbutwrong_schema() -> None:
    from conformbench.backends.llamacpp.backend import LlamaCppBackend
    from conformbench.records.generation import BackendConfig, Constraint

    task = _task("bfcl-simple")
    backend = LlamaCppBackend(BackendConfig())
    try:
        for engine in ("llguidance", "gbnf"):
            for item in task.items():
                schema = task.contract_schema(item, Condition("constrained", "arguments", engine))
                assert schema is not None
                backend.compile(Constraint(schema=schema, engine=engine))
    finally:
        backend.close()


def test_default_style_is_conformbenchs() -> None:
    for name in CONTRACTS:
        default, named = _task(name, None), _task(name, "conformbench")
        assert default.prompt_style == "conformbench"
        item = default.items()[0]
        assert default.prompt(item, Condition("unconstrained")) == named.prompt(item, Condition("unconstrained"))
        assert "```json" in default.prompt(item, Condition("prompt_only", CONTRACTS[name][0])).messages[0].content


def test_unknown_prompt_style_is_refused_with_a_suggestion() -> None:
    with pytest.raises(UsageError, match="option prompt_style: .*'validbutwrng'; did you mean 'validbutwrong'"):
        _task("gsm8k", "validbutwrng")
    with pytest.raises(UsageError, match="has no option 'prompt_styl'.*prompt_style"):
        tasks.get("gsm8k")(TaskOptions(params={"prompt_styl": "validbutwrong"}))
    with pytest.raises(UsageError, match="has no option 'prompt_style'"):
        tasks.get("custom")(TaskOptions(params={"prompt_style": "validbutwrong"},
                                        dataset=str(EXAMPLES / "questions.jsonl")))
