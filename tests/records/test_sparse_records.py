"""One rule leaves a record's fields out at their default
(``records.base.SparseRecord``; each such field marked
``OMITTED_AT_DEFAULT`` in its type), so files written before a field
existed stay byte for byte what they were."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

from pydantic import Field

from conformbench.records.base import OMITTED_AT_DEFAULT, SparseRecord
from conformbench.records.replay import GenerationRecord

SRC = Path(__file__).resolve().parents[2] / "src" / "conformbench"


class _Row(SparseRecord):
    name: str
    count: Annotated[int, OMITTED_AT_DEFAULT] = 0
    note: Annotated[str | None, OMITTED_AT_DEFAULT] = None
    tags: Annotated[list[str], OMITTED_AT_DEFAULT] = Field(default_factory=list)
    kept: int = 0


def test_a_marked_field_is_left_out_at_its_default_and_written_otherwise() -> None:
    assert _Row.omitted_at_default == {"count": 0, "note": None, "tags": []}
    assert _Row(name="a").model_dump_json() == '{"name":"a","kept":0}'
    assert _Row(name="a").model_dump() == {"name": "a", "kept": 0}
    row = _Row(name="a", count=2, note="", tags=["x"])
    assert row.model_dump_json() == '{"name":"a","count":2,"note":"","tags":["x"],"kept":0}'
    assert _Row.model_validate_json(row.model_dump_json()) == row
    # a dump that includes some fields only: the rule drops what is still at its default
    assert json.loads(_Row(name="b").model_dump_json(include={"name", "count"})) == {"name": "b"}


def test_a_generation_record_writes_only_what_it_recorded() -> None:
    dumped = GenerationRecord.model_validate(
        {"task": "t", "model": "m", "item_id": "i", "condition": {"arm": "prompt_only"},
         "prompt": {"messages": []}}).model_dump()
    assert not set(GenerationRecord.omitted_at_default) & set(dumped)
    assert {"sample", "round", "beams", "thinking", "server", "mask_toll"} <= set(GenerationRecord.omitted_at_default)


def test_no_record_declares_its_own_omission_rule() -> None:
    """The markers are the one way (``Condition.axes`` aside: ``Condition``
    is a dataclass, not a ``SparseRecord``)."""
    users = sorted(str(p.relative_to(SRC)) for p in SRC.rglob("*.py") if "exclude_if" in p.read_text("utf-8"))
    assert users == ["records/items.py"]
