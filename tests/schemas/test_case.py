"""SchemaCase records and load_dataset's errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformbench.errors import UsageError
from conformbench.schemas.case import (
    InvalidInstance,
    SchemaCase,
    dump_case,
    load_dataset,
)


def _case(ident: str = "a") -> SchemaCase:
    return SchemaCase(
        id=ident,
        schema={"type": "object", "properties": {"z": {"type": "string"}, "a": {"type": "integer"}}},
        renderings={"json": "{}"},
        valid_instance={"z": "x", "a": 1},
        invalid_instances=[InvalidInstance(keyword="type", schema_path="/type", instance=3)],
    )


def test_round_trip_keeps_key_order(tmp_path: Path) -> None:
    (tmp_path / "dataset.jsonl").write_text(dump_case(_case()) + "\n" + dump_case(_case("b")) + "\n")
    cases = load_dataset(tmp_path)
    assert [c.id for c in cases] == ["a", "b"]
    assert cases[0] == _case()
    assert list(cases[0].schema["properties"]) == ["z", "a"]  # type: ignore[index]
    assert '"schema": {"type": "object"' in dump_case(cases[0])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json\n", ":1:"),
        ('{"id": "a"}\n', ":1: schema"),
        ("", "no records"),
        (dump_case(_case()) + "\n" + dump_case(_case()) + "\n", "duplicate id 'a'"),
        (dump_case(_case())[:-1] + ', "extra": 1}\n', "extra"),
    ],
)
def test_bad_files_give_one_line_errors(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "dataset.jsonl"
    path.write_text(text)
    with pytest.raises(UsageError, match=message) as caught:
        load_dataset(path)
    assert "\n" not in str(caught.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="cannot read dataset"):
        load_dataset(tmp_path / "nope.jsonl")
