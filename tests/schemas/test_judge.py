"""schemas/judge.py, the library ``conformbench validate`` imports when it
runs: a parsed value judged with each violation's keyword, paths, root-type
flag and (if asked) position per schema format; a file parsed in the format
its name says first."""

from __future__ import annotations

from pathlib import Path

from conformbench.schemas.judge import format_of, judge, judge_value
from conformbench.validator.schema_validator import validator_for

SCHEMA = {"type": "object", "properties": {"a": {"type": "integer", "maximum": 3}}, "required": ["a"]}


def test_a_value_is_judged_with_every_violation_and_its_positions() -> None:
    verdict = judge_value(SCHEMA, "x", {"a": 7}, positions=True)
    assert not verdict.valid and verdict.parsed
    (v,) = verdict.violations
    assert (v.keyword, v.instance_path, v.schema_path, v.root_type) == ("maximum", "/a", "/properties/a/maximum",
                                                                        False)
    assert v.positions is not None and set(v.positions) == {"json", "yaml", "xml", "python", "nl"}
    assert judge_value(SCHEMA, "y", [1], validator=validator_for(SCHEMA)).violations[0].root_type
    assert judge_value(SCHEMA, "z", {"a": 1}).valid


def test_a_file_is_parsed_in_the_format_its_name_says(tmp_path: Path) -> None:
    assert (format_of(Path("i.yaml")), format_of(Path("i.json")), format_of(Path("i.txt"))) == ("yaml", "json",
                                                                                                "json")
    (tmp_path / "i.yaml").write_text("a: 9\n")
    assert [v.keyword for v in judge(SCHEMA, tmp_path / "i.yaml", "yaml").violations] == ["maximum"]
    (tmp_path / "broken.json").write_text("{a")
    broken = judge(SCHEMA, tmp_path / "broken.json", "json")
    assert not broken.parsed and not broken.valid and broken.error
