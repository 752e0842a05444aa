"""The BFCL v4 call section over real task scores (no model)."""

from __future__ import annotations

import json

from conformbench.records.items import TaskOptions
from conformbench.scoring.calls_section import CallsSection
from conformbench.scoring.table import ScoredGeneration, ScoredTable
from conformbench.tasks.base import tasks


def test_the_calls_section_rates_each_arm_and_pairs_them() -> None:
    task = tasks.get("bfcl-irrelevance")(TaskOptions(n=4))
    prompt_only, constrained = task.conditions()
    items = task.items()
    name = task.call_item(items[0]).functions[0].name
    forced = json.dumps([{"function": name, "parameters": {}}])
    rows = [ScoredGeneration(i, prompt_only, task.score(i, prompt_only, "[]", False), "stop") for i in items]
    rows += [ScoredGeneration(i, constrained, task.score(i, constrained, forced if k == 0 else "[]", False), "stop")
             for k, i in enumerate(items)]
    table = ScoredTable("bfcl-irrelevance", "m", tuple(i.id for i in items), (prompt_only, constrained), tuple(rows))
    section = CallsSection()
    assert section.applies_to("bfcl-irrelevance") and not section.applies_to("bfcl-simple")
    data = section.compute(table)
    assert data is not None and (data.relevant, data.irrelevant) == (0, 4)
    first, second = data.arms
    assert (first.decision.k, second.decision.k) == (4, 3) and first.right_function is None
    assert second.arguments_valid is not None and second.arguments_valid.n == 1
    assert second.accuracy.k == 3 and second.wrong_but_valid.k == (1 if rows[4].score.valid else 0)
    (pair,) = data.pairs
    assert pair.n == 4 and [d.discordant for d in pair.deltas] == [(1, 0), (1, 0)]
    assert "call decision" in section.markdown(data)

