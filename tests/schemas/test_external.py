"""Reading external schema suites: directories and JSON Lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformbench.errors import UsageError
from conformbench.schemas.case import ExcludedSchema
from conformbench.schemas.external import ExternalSchema, read_external


def test_directory_in_name_order(tmp_path: Path) -> None:
    (tmp_path / "b.json").write_text('{"type": "string"}')
    (tmp_path / "a.json").write_text("true")
    (tmp_path / "c.json").write_text("{oops")
    got = list(read_external(tmp_path))
    assert [g.id for g in got] == ["a", "b", "c"]
    assert isinstance(got[0], ExternalSchema) and got[0].schema is True
    assert isinstance(got[2], ExcludedSchema) and "not JSON" in got[2].reason


def test_jsonl_layouts(tmp_path: Path) -> None:
    path = tmp_path / "suite.jsonl"
    lines = [
        json.dumps({"type": "integer"}),
        json.dumps({"id": "named", "schema": {"type": "null"}}),
        json.dumps({"unique_id": "bench-1", "json_schema": json.dumps({"type": "boolean"})}),
        json.dumps({"json_schema": "{broken"}),
        "",
        "not json",
    ]
    path.write_text("\n".join(lines) + "\n")
    got = list(read_external(path))
    assert [g.id for g in got] == ["suite-1", "named", "bench-1", "suite-4", "suite-6"]
    assert [getattr(g, "schema", None) for g in got[:3]] == [{"type": "integer"}, {"type": "null"}, {"type": "boolean"}]
    assert isinstance(got[3], ExcludedSchema) and "schema string" in got[3].reason
    assert isinstance(got[4], ExcludedSchema) and got[4].source == "suite.jsonl:6"


def test_missing_or_empty_sources(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such"):
        list(read_external(tmp_path / "nope"))
    with pytest.raises(UsageError, match="no \\*.json"):
        list(read_external(tmp_path))
