"""The validation task's items are a function of the dataset and the seed
only: the negatives drawn for the 100 default schemas are pinned here, so a
change anywhere below (a type alias, a renderer) that moves them fails."""

from __future__ import annotations

import pytest

from conformbench.records.items import TaskOptions
from conformbench.tasks.base import tasks

#: items that moved when JSONValue became a pydantic-validated union (2026-12-01)
PINNED = {
    "gen-0043:uniqueItems+maximum", "gen-0055:dependentRequired", "gen-0064:const+maxItems",
    "gen-0065:maxLength+enum", "gen-0079:minLength", "gen-0089:additionalProperties+contains",
    "gen-0091:maxLength", "gen-0099:minLength+pattern",
}


@pytest.mark.long
def test_the_drawn_negatives_do_not_move() -> None:
    task = tasks.get("validation")(TaskOptions(n=100))
    ids = {item.id for item in task.items()}
    assert len(ids) == 200
    assert PINNED <= ids
