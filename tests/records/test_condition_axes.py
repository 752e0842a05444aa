"""A condition carries a task's own axes by name; a condition without any
is stored exactly as before axes existed, so shipped replays read and
rescore byte for byte."""

from __future__ import annotations

import json

from pydantic import TypeAdapter

from conformbench.records.items import Condition

ADAPTER = TypeAdapter(Condition)


def test_a_condition_without_own_axes_is_stored_as_before() -> None:
    stored = json.loads(ADAPTER.dump_json(Condition("prompt_only", "schema", None, "json", "yaml", 3)))
    assert stored == {"arm": "prompt_only", "contract": "schema", "engine": None, "schema_format": "json",
                      "output_format": "yaml", "shots": 3}


def test_own_axes_are_stored_read_back_and_keyed() -> None:
    cond = Condition.of("constrained", "answer", "llguidance", {"tone": "pirate", "level": 2})
    assert cond.axes == (("tone", "pirate"), ("level", 2)) and cond.schema_format is None
    assert ADAPTER.validate_json(ADAPTER.dump_json(cond)) == cond
    assert cond.key == "tone=pirate/level=2/constrained[answer]@llguidance"
    assert cond.axis("tone") == "pirate" and cond.axis("shots") is None


def test_the_concodeeval_axes_are_read_by_name_and_keep_their_fields() -> None:
    cond = Condition.of("prompt_only", "schema", None, {"schema_format": "xml", "output_format": "json", "shots": 3})
    assert cond == Condition("prompt_only", "schema", None, "xml", "json", 3) and cond.axes == ()
    assert cond.axis_values == {"schema_format": "xml", "output_format": "json", "shots": 3}
    assert cond.key == "xml->json/3shot/prompt_only[schema]"
    assert Condition("unconstrained").axis_values == {}
