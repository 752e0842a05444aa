"""conformbench's tasks as Inspect AI tasks, registered through the
``inspect_ai`` entry point (``inspect eval conformbench/gsm8k_arms
--model openai-api/... -T arm='constrained[answer]'``).

Each task runs one condition (its ``arm`` parameter, and for the ConCodeEval
tasks ``schema_format`` / ``output_format``) with our items, prompts and
scorer. A constraint goes to the server in ``extra_body`` with the full
schema in the chosen structured-output ``dialect``, never through Inspect's
``ResponseSchema``, whose ``JSONSchema`` model drops keywords silently
(``multipleOf``, ``const``, ``minProperties``, ``allOf``, ``$defs``). For a
constrained arm the canary runs as a setup step: the provider must force a
random constant the model would never write, else every sample fails with
the reason. Each sample's metadata holds the item and the condition, so
``conformbench import inspect LOG`` rebuilds a replay that ``score``
reads (paired bootstrap, McNemar, ledger, report).

Decoding is greedy unless a task gets ``temperature``; with Inspect's
``--epochs K`` each item then has K samples, which ``import inspect``
reads as ``[decoding] samples`` = K (epoch e is sample e - 1).

This module imports ``inspect_ai`` at the top: Inspect loads it (the entry
point), nothing in conformbench does."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser, GenerateConfig, get_model
from inspect_ai.scorer import Score, Target, mean, scorer
from inspect_ai.solver import Generate, TaskState, solver

from conformbench.arms.base import arms
from conformbench.audits.canary import canary_constant, canary_schema
from conformbench.backends.openai.dialects import DIALECTS
from conformbench.errors import UsageError
from conformbench.records.items import Condition, Item, TaskOptions
from conformbench.records.prompt import CANARY_PROMPT, Prompt
from conformbench.registry import did_you_mean
from conformbench.tasks.base import Task as OurTask
from conformbench.tasks.base import tasks

__all__ = ["bfcl_arms", "concodeeval_generation", "concodeeval_validation", "gsm8k_arms"]

#: sample metadata keys the importer reads back
ITEM_KEY, CONDITION_KEY, TASK_KEY = "conformbench_item", "conformbench_condition", "conformbench_task"
_CANARY_SEED = 20261201
_canaries: dict[str, str | None] = {}
#: one lock per event loop: each Inspect eval() runs its own loop, and a lock binds to the first it meets
_canary_locks: dict[int, asyncio.Lock] = {}


def _body(dialect: str, schema: dict[str, Any]) -> dict[str, Any]:
    if dialect not in DIALECTS:
        raise UsageError(f"unknown dialect {dialect!r}{did_you_mean(dialect, list(DIALECTS))}; "
                         f"known: {', '.join(DIALECTS)}")
    body: dict[str, Any] = {}
    DIALECTS[dialect].put(body, schema, "answer")
    return body


def _messages(prompt: Prompt) -> list[Any]:
    kinds = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}
    return [kinds[m.role](content=m.content) for m in prompt.messages]


def _condition(ours: OurTask) -> Condition:
    conditions = ours.conditions()
    if len(conditions) != 1:
        raise UsageError(f"task {ours.name}: the parameters give {len(conditions)} conditions; give one arm "
                         "(and one schema and output format)")
    condition = conditions[0]
    if not arms.get(condition.arm).one_call:
        raise UsageError(f"arm {condition.arm} takes more than one turn; Inspect tasks run one-turn arms")
    return condition


def _sample(ours: OurTask, item: Item, condition: Condition, dialect: str) -> Sample:
    schema = ours.contract_schema(item, condition) if arms.get(condition.arm).constrained else None
    return Sample(
        id=item.id, input=_messages(ours.prompt(item, condition)),
        target="" if item.target is None else json.dumps(item.target),
        metadata={ITEM_KEY: dataclasses.asdict(item), CONDITION_KEY: _condition_meta(condition),
                  "extra_body": None if schema is None else _body(dialect, schema)})


def _condition_meta(condition: Condition) -> dict[str, object]:
    """The condition as a sample's metadata holds it (``axes`` only where the task has its own, ``mode``
    only where the arm takes one: the layout a replay writes)."""
    fields = dataclasses.asdict(condition)
    return {k: v for k, v in fields.items() if not (k == "axes" and not v) and not (k == "mode" and v is None)}


async def _canary_verdict(dialect: str) -> str | None:
    """None when the provider forced the canary constant, else why not (once per model and dialect)."""
    model = get_model()
    key = f"{model}|{dialect}"
    lock = _canary_locks.setdefault(id(asyncio.get_running_loop()), asyncio.Lock())
    async with lock:
        if key not in _canaries:
            constant = canary_constant(_CANARY_SEED)
            out = await model.generate(_messages(CANARY_PROMPT), config=GenerateConfig(
                max_tokens=64, temperature=0.0, extra_body=_body(dialect, canary_schema(constant))))
            text = out.completion
            _canaries[key] = None if constant in text else (
                f"the canary failed: under dialect {dialect} the provider did not force the constant "
                f"{constant} (it wrote {text[:80]!r}); it drops the constraint, so constrained results "
                "would be unconstrained ones")
        return _canaries[key]


@solver
def canary(dialect: str) -> Any:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if state.metadata.get("extra_body") is not None:
            why = await _canary_verdict(dialect)
            if why is not None:
                raise RuntimeError(why)
        return state
    return solve


@solver
def constrained_generate(max_tokens: int, temperature: float = 0.0) -> Any:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        body = state.metadata.get("extra_body")
        if body is None:
            return await generate(state, max_tokens=max_tokens, temperature=temperature)
        return await generate(state, max_tokens=max_tokens, temperature=temperature, extra_body=body)
    return solve


def _conformbench_scorer(ours: OurTask, condition: Condition, keys: list[str]) -> Any:
    @scorer(metrics={key: [mean()] for key in keys}, name="conformbench")
    def conformbench() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            item = Item(**state.metadata[ITEM_KEY])
            cut = state.output.stop_reason in ("max_tokens", "model_length")
            s = ours.score(item, condition, state.output.completion, cut)
            values = {"valid": s.valid, "correct": s.correct,
                      "wrong_but_valid": None if s.valid is None or s.correct is None else s.valid and not s.correct}
            return Score(value={k: 1.0 if values[k] else 0.0 for k in keys}, explanation=s.note, metadata={
                "parsed": s.parsed, "cut": cut,
                "violations": [dataclasses.asdict(v) for v in s.violations]})
        return score
    return conformbench()


@dataclasses.dataclass(frozen=True)
class _Decoding:
    """What every task passes on to the provider: greedy by default; a
    temperature with ``--epochs K`` gives each item K samples."""

    dialect: str
    max_tokens: int
    temperature: float = 0.0


def _arms_task(name: str, arm: str, n: int | None, decoding: _Decoding,
               options: dict[str, Any] | None = None) -> Task:
    ours = tasks.get(name)(TaskOptions(n=n, arms=(arm,), engines=("server",), axes=dict(options or {})))
    condition = _condition(ours)
    if decoding.temperature < 0:
        raise UsageError(f"temperature must be at least 0, not {decoding.temperature}")
    samples = [_sample(ours, item, condition, decoding.dialect) for item in ours.items()]
    arm_obj = arms.get(condition.arm)
    keys = ["valid", "correct", "wrong_but_valid"] if arm_obj.contracts != "none" else ["correct"]
    return Task(
        dataset=samples, setup=canary(decoding.dialect),
        solver=constrained_generate(decoding.max_tokens, decoding.temperature),
        scorer=_conformbench_scorer(ours, condition, keys),
        metadata={TASK_KEY: {"task": name, "n": n, "arm": arm, **dataclasses.asdict(decoding),
                             "options": {k: list(v) if isinstance(v, tuple) else v
                                         for k, v in (options or {}).items()}}})


@task
def gsm8k_arms(arm: str = "prompt_only[answer]", n: int = 20, dialect: str = "json_object_schema",
               max_tokens: int = 384, temperature: float = 0.0) -> Task:
    """GSM8K through one decoding arm, scored for validity, accuracy and wrong-but-valid."""
    return _arms_task("gsm8k", arm, n, _Decoding(dialect, max_tokens, temperature))


@task
def bfcl_arms(arm: str = "prompt_only[arguments]", n: int = 20, dialect: str = "json_object_schema",
              max_tokens: int = 384, temperature: float = 0.0) -> Task:
    """BFCL v3 simple through one decoding arm (AST match)."""
    return _arms_task("bfcl-simple", arm, n, _Decoding(dialect, max_tokens, temperature))


@task
def concodeeval_generation(arm: str = "prompt_only", schema_format: str = "json", output_format: str = "json",
                           n: int = 20, dialect: str = "json_object_schema", max_tokens: int = 1024,
                           temperature: float = 0.0) -> Task:
    """ConCodeEval generation: write an instance of a schema (one format cell)."""
    return _arms_task("generation", arm, n, _Decoding(dialect, max_tokens, temperature),
                      {"schema_formats": (schema_format,), "output_formats": (output_format,)})


@task
def concodeeval_validation(arm: str = "unconstrained", schema_format: str = "json", output_format: str = "json",
                           n: int = 20, dialect: str = "json_object_schema", max_tokens: int = 1024,
                           temperature: float = 0.0) -> Task:
    """ConCodeEval validation: does this sample comply? (one format cell)."""
    return _arms_task("validation", arm, n, _Decoding(dialect, max_tokens, temperature),
                      {"schema_formats": (schema_format,), "output_formats": (output_format,)})
