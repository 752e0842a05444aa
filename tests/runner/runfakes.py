"""A scripted backend and a tiny arithmetic task, for unit tests of the
generic run/score/report machinery only (real-model tests live beside them).

The task's prompts are JSON naming the arm and item index; the backend reads
them and answers from a fixed script, so every outcome is known in advance.
Both register themselves ("fake" backend, "fake-qa" task) on import.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from conformbench.backends.base import backends
from conformbench.backends.manifest import BackendManifest
from conformbench.errors import UnsupportedSchemaError
from conformbench.jsontypes import Schema
from conformbench.records.generation import BackendConfig, GenerationRequest, GenerationResult
from conformbench.records.items import Condition, Item, ItemScore
from conformbench.records.markdown_escape import md_text
from conformbench.records.prompt import Message, Prompt
from conformbench.records.rounds import TurnKind
from conformbench.scoring.sections import Section, sections
from conformbench.scoring.table import ScoredTable
from conformbench.tasks.base import Task, tasks

ANSWER: Schema = {
    "type": "object",
    "properties": {"answer": {"type": "integer"}},
    "required": ["answer"],
}


#: the fake task's stop string for free-text generations
FREE_TEXT_STOP = "\nQ:"
#: words of a repair turn: the scripted model answers it right
FEEDBACK = "The validator reports"


@dataclass
class CallLog:
    """Every request the fake backends saw (shared across instances)."""

    requests: list[GenerationRequest] = field(default_factory=list)

    def clear(self) -> None:
        self.requests.clear()


CALLS = CallLog()


class FakeQaTask(Task):
    """Items q0..q{n-1} ("what is i + 1?"); params: unsupported (item ids whose
    contract schema the backend refuses), skip_cells (see cell_exclusion)."""

    name = "fake-qa"
    contracts = ("answer",)
    answer_contract = "answer"
    #: what the tests ask of it (items to make unsupported, cells to skip)
    known_params = ("unsupported", "skip_cells")

    def items(self) -> list[Item]:
        n = self.options.n or 6
        unsupported = set(self.options.params.get("unsupported", []))
        return [Item(id=f"q{i}", input={"i": i, "unsupported": f"q{i}" in unsupported},
                     target=i + 1) for i in range(n)]

    def conditions(self) -> list[Condition]:
        engine = self.options.engines[0] if self.options.engines else "llguidance"
        every = [Condition("unconstrained"), Condition("prompt_only", "answer"),
                 Condition("constrained", "answer", engine),
                 Condition("reason_then_constrain", "answer", engine)]
        wanted = set(self.options.arms)
        # the multi-round arms only when named
        rounds = [Condition("repair", "answer"), Condition("resample", "answer"),
                  Condition("fallback", "answer", engine)]
        return [c for c in every if not wanted or c.arm in wanted] + [c for c in rounds if c.arm in wanted]

    def turn_prompt(self, item: Item, condition: Condition, kind: TurnKind) -> Prompt:
        arm = {"free": "unconstrained", "ask": "prompt_only"}.get(kind, "constrained")
        return Prompt((Message("user", json.dumps({"arm": arm, "i": item.input["i"]})),))

    def cell_exclusion(self, item: Item, condition: Condition) -> str | None:
        """params skip_cells: "q1/prompt_only" style pairs with no prompt."""
        skipped = set(self.options.params.get("skip_cells", []))
        return "no prompt for this cell" if f"{item.id}/{condition.arm}" in skipped else None

    def contract_schema(self, item: Item, condition: Condition) -> Schema | None:
        if condition.contract is None:
            return None
        return {**ANSWER, "x-unsupported": True} if item.input["unsupported"] else ANSWER

    def packaging_prompt(self, item: Item, condition: Condition, free_text: str) -> Prompt:
        body = json.dumps({"arm": "package", "i": item.input["i"], "free": free_text})
        return Prompt((Message("user", body),))

    def turn_stops(self, item: Item, condition: Condition, kind: TurnKind) -> tuple[str, ...]:
        # free text only: a grammar ends the JSON itself
        return (FREE_TEXT_STOP,) if kind == "free" else ()

    def score(self, item: Item, condition: Condition, text: str, truncated: bool) -> ItemScore:
        if condition.contract is None:
            found = re.findall(r"-?\d+", text)
            answer = int(found[-1]) if found else None
            return ItemScore(valid=None, correct=answer == item.target, truncated=truncated,
                             answer=answer)
        try:
            value = json.loads(text)
        except ValueError:
            return ItemScore(valid=False, correct=False, parsed=False, truncated=truncated)
        valid = isinstance(value, dict) and type(value.get("answer")) is int
        answer = value.get("answer") if isinstance(value, dict) else None
        return ItemScore(valid=valid and not truncated, correct=answer == item.target,
                         truncated=truncated, answer=answer)


def scripted(arm: str, i: int, free: str = "") -> tuple[str, str]:
    """(text, finish_reason) the fake model writes."""
    right = i + 1
    if arm == "unconstrained":
        return (f"So the answer is {right}." if i % 2 == 0 else f"I think {i}.", "stop")
    if arm == "prompt_only":
        return [(f'{{"answer": {right}}}', "stop"), ("answer: 5", "stop"),
                ('{"answer": 0}', "stop")][i % 3]
    if arm == "constrained":
        if i % 5 == 4:
            return ('{"answer": 99999999', "length")
        return (f'{{"answer": {right}}}' if i % 2 == 0 else '{"answer": 7}', "stop")
    if arm == "package":
        found = re.findall(r"-?\d+", free)
        return (f'{{"answer": {found[-1] if found else 0}}}', "stop")
    raise AssertionError(arm)


class FakeBackend:
    """Answers from ``scripted``; honours the canary's ``const`` unless
    ``extra={"broken": True}`` (a constraint that is silently ignored).
    Prompts of other tasks get ``extra["reply"]`` (default "It is sunny.")."""

    name = "fake"
    manifest = BackendManifest()

    def __init__(self, config: BackendConfig) -> None:
        self.config = config
        self.closed = False

    def generate(self, request: GenerationRequest) -> GenerationResult:
        CALLS.requests.append(request)
        c = request.constraint
        if c is not None and c.schema.get("x-unsupported"):
            raise UnsupportedSchemaError(c.engine, "x-unsupported is not supported")
        canary = (c.schema.get("properties", {}).get("canary", {}) if c else {})
        if "const" in canary and not self.config.extra.get("broken"):
            return GenerationResult(json.dumps({"canary": canary["const"]}), "stop")
        try:
            body = json.loads(request.prompt.messages[0].content)
            last = json.loads(request.prompt.messages[-1].content) if len(request.prompt.messages) == 1 else None
        except ValueError:
            body = last = None
        if body is None or (last is None and len(request.prompt.messages) == 1):
            return GenerationResult(str(self.config.extra.get("reply", "It is sunny.")), "stop")
        if last is None and FEEDBACK in request.prompt.messages[-1].content:  # a repair turn: fixed
            text, finish = f'{{"answer": {body["i"] + 1}}}', "stop"
        elif body["arm"] == "prompt_only" and request.settings.temperature > 0:  # resampled: valid, maybe wrong
            text, finish = f'{{"answer": {request.settings.seed % 3}}}', "stop"
        else:
            text, finish = scripted((last or body)["arm"], (last or body)["i"], (last or body).get("free", ""))
        return GenerationResult(text, finish, prompt_tokens=10,  # type: ignore[arg-type]
                                completion_tokens=len(text) // 3, seconds=0.01)

    def generate_many(self, requests: list[GenerationRequest]) -> list[GenerationResult]:
        return [self.generate(r) for r in requests]

    def metadata(self) -> dict[str, Any]:
        return {"model": "scripted", "sha256": "0" * 64}

    def close(self) -> None:
        self.closed = True


if "fake" not in backends:
    backends.register("fake")(FakeBackend)
if "fake-qa" not in tasks:
    tasks.register("fake-qa")(FakeQaTask)


def fake_spec(out: Path, **task: Any) -> dict[str, Any]:
    """A plain-data run spec on the fake backend (canary off unless asked)."""
    canary = task.pop("canary", False)
    model = task.pop("model", {})
    return {
        "models": [{"label": "fake-model", "backend": "fake", **model}],
        "tasks": [{"name": "fake-qa", "n": 6, **task}],
        "decoding": {"max_tokens": 32},
        "out": str(out),
        "canary": canary,
        "quiet": True,
    }




class TallyData(BaseModel):
    right: dict[str, int]


class TallySection(Section[TallyData]):
    """Counts right answers per condition (a section and gate metrics for
    fake-qa only)."""

    name = "fake-tally"
    title = "Right answers per condition"
    data_model = TallyData
    gate_metrics = ("n_right",)

    def applies_to(self, task_name: str) -> bool:
        return task_name == "fake-qa"

    def compute(self, table: ScoredTable) -> TallyData:
        return TallyData(right={c.key: sum(bool(r.score.correct) for r in table.column(c))
                                for c in table.conditions})

    def metrics(self, data: TallyData) -> dict[str, float]:
        return {f"n_right[{k}]": float(v) for k, v in data.right.items()}

    def markdown(self, data: TallyData) -> str:
        return "\n".join(f"- {md_text(k)}: {v}" for k, v in data.right.items()) + "\n"


if "fake-tally" not in sections:
    sections.register("fake-tally")(TallySection)
