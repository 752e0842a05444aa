"""Every axis of a condition is a pair in ``axes``, the ConCodeEval tasks'
too (replay layout 3); a condition of layout 2, with their own fields,
reads into the same condition, and its label is the one it always had."""

from __future__ import annotations

import json

from pydantic import TypeAdapter

from conformbench.records.items import Condition

ADAPTER = TypeAdapter(Condition)
CELL = {"schema_format": "json", "output_format": "yaml", "shots": 3}


def test_the_concodeeval_axes_are_stored_in_axes() -> None:
    stored = json.loads(ADAPTER.dump_json(Condition.of("prompt_only", "schema", None, CELL)))
    assert stored == {"arm": "prompt_only", "contract": "schema", "engine": None,
                      "axes": [["schema_format", "json"], ["output_format", "yaml"], ["shots", 3]]}
    assert json.loads(ADAPTER.dump_json(Condition("unconstrained"))) == {
        "arm": "unconstrained", "contract": None, "engine": None}


def test_a_layout_2_condition_reads_into_axes() -> None:
    old = {"arm": "prompt_only", "contract": "schema", "engine": None, **CELL}
    assert ADAPTER.validate_python(old) == Condition.of("prompt_only", "schema", None, CELL)
    plain = {"arm": "constrained", "contract": "answer", "engine": "llguidance", "schema_format": None,
             "output_format": None, "shots": 0, "axes": [["tone", "pirate"]]}
    assert ADAPTER.validate_python(plain) == Condition.of("constrained", "answer", "llguidance", {"tone": "pirate"})


def test_own_axes_are_stored_read_back_and_keyed() -> None:
    cond = Condition.of("constrained", "answer", "llguidance", {"tone": "pirate", "level": 2})
    assert cond.axes == (("tone", "pirate"), ("level", 2)) and cond.axis("schema_format") is None
    assert ADAPTER.validate_json(ADAPTER.dump_json(cond)) == cond
    assert cond.key == "tone=pirate/level=2/constrained[answer]@llguidance"
    assert cond.axis("tone") == "pirate" and cond.axis("shots") is None and cond.count_axis("shots") == 0


def test_the_concodeeval_axes_are_read_by_name_and_keep_their_label() -> None:
    cond = Condition.of("prompt_only", "schema", None, {"schema_format": "xml", "output_format": "json", "shots": 3})
    assert cond.axis_values == {"schema_format": "xml", "output_format": "json", "shots": 3}
    assert cond.text_axis("schema_format") == "xml" and cond.count_axis("shots") == 3
    assert cond.key == "xml->json/3shot/prompt_only[schema]"
    assert Condition("unconstrained").axis_values == {}
