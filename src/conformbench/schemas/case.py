"""The dataset record (one schema with its renderings and oracle instances)
and reading/writing of dataset files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field, ValidationError

from conformbench.errors import UsageError
from conformbench.files import jsonl_lines, read_text_file
from conformbench.jsontypes import JSONValue
from conformbench.records.base import FrozenRecord

__all__ = [
    "ExcludedSchema",
    "InexactKeywordRecord",
    "InvalidInstance",
    "SchemaCase",
    "UnisolatedKeyword",
    "dump_case",
    "load_dataset",
]


_Record = FrozenRecord


class InvalidInstance(_Record):
    """An instance that violates exactly one keyword occurrence: the
    validator's violations are all ``keyword`` at ``schema_path``."""

    keyword: str
    schema_path: str
    instance: JSONValue


class UnisolatedKeyword(_Record):
    """A constraint for which the oracle found no single-keyword violation
    (listed instead of silently missing)."""

    keyword: str
    schema_path: str
    reason: str


class InexactKeywordRecord(_Record):
    """A keyword occurrence the Pydantic (python) rendering does not state
    exactly: its model accepts or rejects some values differently from the
    schema (see ``formats.python.format.python_rendering``)."""

    keyword: str
    schema_path: str
    reason: str


class SchemaCase(_Record):
    """One schema of the dataset.

    ``renderings`` maps schema format names (json, yaml, xml, python, nl) to
    the text shown to a model: the formats this schema has.
    ``missing_formats`` maps each requested format that cannot express the
    schema to the reason (written only when not empty). ``python_inexact``
    lists the keywords the python rendering states inexactly (written only
    when not empty). ``source`` is ``generated`` or the external file the
    schema came from.
    """

    id: str
    schema_: dict[str, Any] | bool = Field(alias="schema")
    renderings: dict[str, str]
    missing_formats: dict[str, str] = Field(default_factory=dict)
    python_inexact: list[InexactKeywordRecord] = Field(default_factory=list)
    valid_instance: JSONValue
    invalid_instances: list[InvalidInstance] = Field(default_factory=list)
    unisolated: list[UnisolatedKeyword] = Field(default_factory=list)
    root_type: str | None = None
    depth: int = 1
    source: str = "generated"

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    @property
    def schema(self) -> dict[str, Any] | bool:  # type: ignore[override]
        return self.schema_

    @property
    def formats(self) -> tuple[str, ...]:
        """The schema formats this case has a rendering in."""
        return tuple(self.renderings)


class ExcludedSchema(_Record):
    """An external schema that could not become a SchemaCase, and why."""

    id: str
    source: str
    reason: str


def dump_case(case: SchemaCase) -> str:
    """One JSON line; key order of schemas and instances is preserved. An
    empty ``missing_formats`` or ``python_inexact`` is left out, so records
    without them read (and are written) as before the fields existed."""
    drop = {name for name in ("missing_formats", "python_inexact") if not getattr(case, name)}
    return json.dumps(case.model_dump(mode="json", by_alias=True, exclude=drop or None), ensure_ascii=False)


def load_dataset(path: Path) -> list[SchemaCase]:
    """Read a dataset.jsonl (or the directory holding one); UsageError with
    file and line on anything malformed."""
    if path.is_dir():
        path = path / "dataset.jsonl"
    lines = jsonl_lines(read_text_file(path, "dataset"))
    cases: list[SchemaCase] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            case = SchemaCase.model_validate_json(line)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "record"
            raise UsageError(f"{path}:{number}: {where}: {first['msg']}") from None
        if case.id in seen:
            raise UsageError(f"{path}:{number}: duplicate id {case.id!r}")
        seen.add(case.id)
        cases.append(case)
    if not cases:
        raise UsageError(f"dataset {path} holds no records")
    return cases
