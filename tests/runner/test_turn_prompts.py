"""A turn is asked by its kind, never by renaming the arm: every built-in
arm, walked over items of the shipped replays (``testing.walk_policy``, the
runner's own planning), asks the prompts those replays recorded. A "free"
turn is the unconstrained arm's recorded prompt, "ask" prompt_only's,
"constrained" constrained's, "package" reason_then_constrain's (after its
recorded free text); a "feedback" turn extends its earlier turn and a
"think" turn is the free prompt with the thinking request after it."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pytest

from conformbench.records.items import Condition, Item, TaskOptions
from conformbench.records.prompt import Prompt
from conformbench.records.replay import GenerationRecord
from conformbench.records.replay_file import read_replay
from conformbench.records.rounds import TurnOutcome
from conformbench.runner.shipped import shipped_replay
from conformbench.tasks.base import Task, tasks
from conformbench.tasks.concodeeval.generation import CLOSING_FENCE_STOP
from conformbench.testing import walk_policy

#: task -> the shipped replays that recorded its prompts
FAMILIES = {
    "gsm8k": ("gsm8k",),
    "bfcl-simple": ("bfcl-simple",),
    "validation": ("concodeeval-validation", "concodeeval-validation-arms"),
    "generation": ("concodeeval-generation",),
}
#: the arms conformbench ships
BUILT_IN = ("unconstrained", "prompt_only", "constrained", "reason_then_constrain", "repair", "resample",
            "fallback", "think_then_constrain")
#: the built-in arms a task does not take (refused, or no thinking prompt)
NOT_TAKEN = {
    "validation": {"think_then_constrain"},
    "generation": {"think_then_constrain", "unconstrained", "reason_then_constrain"},
}
#: items walked per task
ITEMS = 3
#: an answer no contract accepts (a multi-round arm asks again)
INVALID = "no JSON here"


@dataclass
class Recorded:
    """A task's items and its recorded first answers, by item id and the
    condition with its engine and contract left out of the key."""

    items: dict[str, Item] = field(default_factory=dict)
    prompts: dict[tuple[str, str, str | None, tuple[object, ...]], GenerationRecord] = field(default_factory=dict)

    def get(self, item: str, arm: str, contract: str | None, cond: Condition) -> GenerationRecord | None:
        return self.prompts.get((item, arm, contract, _cell(cond)))


def _cell(cond: Condition) -> tuple[object, ...]:
    return (cond.axis("schema_format"), cond.axis("output_format"), cond.count_axis("shots"), cond.axes)


@cache
def _recorded(task: str) -> Recorded:
    out = Recorded()
    for name in FAMILIES[task]:
        contents = read_replay(shipped_replay(name))
        for record in contents.items:
            if record.task == task:
                assert out.items.setdefault(record.item.id, record.item) == record.item
        for gen in contents.generations:
            if gen.task == task and gen.round == 0 and gen.sample == 0 and gen.finish_reason != "excluded":
                out.prompts.setdefault((gen.item_id, gen.condition.arm, gen.condition.contract,
                                        _cell(gen.condition)), gen)
    return out


def _task(name: str, cell: Condition, items: list[Item]) -> Task:
    taken = tuple(a for a in BUILT_IN if a not in NOT_TAKEN.get(name, set()))
    cells = {} if cell.axis("schema_format") is None else {
        "schema_formats": (cell.axis("schema_format"),), "output_formats": (cell.axis("output_format"),),
        "shots": (cell.count_axis("shots"),)}
    task = tasks.get(name)(TaskOptions(arms=taken, engines=("llguidance",), axes=cells))
    task._items = list(items)  # type: ignore[attr-defined]  # the replay's own items, as recorded
    return task


def _answers(arm: str, recorded: Recorded, item: str, cond: Condition) -> list[str]:
    """What the walk answers: reason_then_constrain's recorded free text
    (the unconstrained answer where it has no record), then its answer; an
    invalid answer to every other arm, twice."""
    if arm == "reason_then_constrain":
        packaged = recorded.get(item, arm, cond.contract, cond)
        free = packaged.free_text if packaged is not None else recorded.get(item, "unconstrained", None, cond).text  # type: ignore[union-attr]
        assert free is not None
        return [free, "{}"]
    return [INVALID, INVALID]


def _expected(turn: TurnOutcome, earlier: list[TurnOutcome], recorded: Recorded, item: str,
              cond: Condition) -> Prompt | None:
    """The recorded prompt this turn must equal (None: none recorded)."""
    kind = turn.plan.kind
    if kind == "feedback":
        assert turn.plan.prompt.messages[:-2] == earlier[-1].plan.prompt.messages
        assert turn.plan.prompt.messages[-2].content == earlier[-1].text
        return None
    asked_as = {"free": "unconstrained", "ask": "prompt_only", "constrained": "constrained",
                "package": "reason_then_constrain", "think": "unconstrained"}[kind]
    found = recorded.get(item, asked_as, None if kind in ("free", "think") else cond.contract, cond)
    if found is None:
        return None
    if kind == "think":
        (message,) = turn.plan.prompt.messages
        assert message.content.startswith(found.prompt.messages[-1].content + "\n\n")
        return None
    return found.prompt


def _cells(recorded: Recorded) -> list[tuple[Condition, list[str]]]:
    """Per recorded cell, the first ITEMS items with a recorded prompt."""
    by_cell: dict[tuple[object, ...], tuple[Condition, list[str]]] = {}
    for (item, _arm, _contract, cell), gen in recorded.prompts.items():
        ids = by_cell.setdefault(cell, (gen.condition, []))[1]
        if item not in ids and len(ids) < ITEMS:
            ids.append(item)
    return list(by_cell.values())[:2]


@pytest.mark.parametrize("name", list(FAMILIES))
def test_every_built_in_arm_asks_the_recorded_prompts(name: str) -> None:
    recorded = _recorded(name)
    compared: Counter[str] = Counter()
    for cell, ids in _cells(recorded):
        task = _task(name, cell, [recorded.items[i] for i in ids])
        for cond in task.conditions():
            for index, item in enumerate(ids):
                walk = walk_policy(task, cond.key, _answers(cond.arm, recorded, item, cond), item=index)
                assert walk.turns, cond.key
                for at, turn in enumerate(walk.turns):
                    want = _expected(turn, list(walk.turns[:at]), recorded, item, cond)
                    if want is not None:
                        assert turn.plan.prompt == want, (cond.key, item, turn.plan.kind)
                        compared[turn.plan.kind] += 1
                    if name == "generation":  # the fence stop, except under a grammar
                        grammar = turn.plan.kind == "constrained"
                        assert turn.plan.stop == (() if grammar else (CLOSING_FENCE_STOP,)), cond.key
                compared[f"arm:{cond.arm}"] += 1
    every = {a for a in BUILT_IN if a not in NOT_TAKEN.get(name, set())}
    assert {k[4:] for k in compared if k.startswith("arm:")} == every
    kinds = {"gsm8k": {"free", "ask", "constrained", "package"}, "bfcl-simple": {"free", "ask", "constrained",
             "package"}, "validation": {"free", "ask", "constrained"}, "generation": {"ask", "constrained"}}[name]
    assert kinds <= set(compared), compared


#: recorded runs of the multi-round arms (every round's prompt recorded)
ROUNDS_EVIDENCE = ("arms-gsm8k-rounds", "arms-bfcl-rounds", "concodeeval-generation-repair")
EVIDENCE = Path(__file__).resolve().parents[2] / "docs" / "evidence"


@pytest.mark.parametrize("run", ROUNDS_EVIDENCE)
def test_multi_round_arms_ask_every_recorded_round(run: str) -> None:
    """repair, resample and fallback, walked with each round's recorded
    answer, ask each round's recorded prompt and stop where the run stopped."""
    contents = read_replay(EVIDENCE / run / "replay.jsonl")
    items = {r.item.id: r.item for r in contents.items}
    rounds: dict[tuple[str, Condition], dict[int, GenerationRecord]] = {}
    for gen in contents.generations:
        if gen.condition.arm in ("repair", "resample", "fallback") and gen.sample == 0:
            rounds.setdefault((gen.item_id, gen.condition), {})[gen.round] = gen
    walked: Counter[str] = Counter()
    for (item_id, cond), recorded in rounds.items():
        if walked[cond.key] >= ITEMS or any(g.finish_reason == "excluded" for g in recorded.values()):
            continue
        task = _task(contents.generations[0].task, cond, [items[item_id]])
        answers = [recorded[r].text for r in sorted(recorded)]
        walk = walk_policy(task, cond.key, answers)
        assert [t.plan.prompt for t in walk.turns] == [recorded[r].prompt for r in sorted(recorded)], cond.key
        assert walk.stopped or len(walk.turns) == 3, cond.key  # the run's --max-rounds
        walked[cond.key] += 1
    assert sum(walked.values()) >= ITEMS * 2, walked
