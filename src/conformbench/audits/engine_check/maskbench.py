"""Engine authors' test suites in MaskBench's shape (guidance-ai/jsonschemabench):
a directory of ``*.json`` files, each ``{"schema": ..., "meta": ...,
"tests": [{"description": ..., "data": ..., "valid": ...}]}``.

Each test's document is judged against the verdict the file gives it. In
MaskBench's terms a *validation error* is a valid document the grammar
rejects (our over-constrained) and an *invalidation error* an invalid one it
accepts (our under-constrained). An invalid document is tallied under the
keyword it breaks as conformbench's validator sees it (the suites do not
say), so the keyword matrix reads as for the other sources.

Nothing of these suites is shipped (their repositories carry no licence):
point ``--schemas`` at a user's own copy.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformbench.audits.engine_check.sources import (
    VALID_GROUP,
    CheckSchema,
    CheckSource,
    Instance,
    oversized_pattern,
    schemas_source,
)
from conformbench.errors import UsageError
from conformbench.files import MAX_SCHEMA_BYTES, read_text_file
from conformbench.schemas.case import ExcludedSchema
from conformbench.schemas.external import loads_schema, schema_files
from conformbench.validator.schema_validator import validator_for

__all__ = [
    "MASKBENCH_UNKNOWN_GROUP",
    "is_maskbench_case",
    "is_maskbench_dir",
    "maskbench_source",
    "read_schemas_source",
]

#: the group of an invalid test in which conformbench's validator finds no violation
MASKBENCH_UNKNOWN_GROUP = "(invalid: no violation found by conformbench's validator)"


def is_maskbench_case(value: Any) -> bool:
    """Whether ``value`` is one MaskBench file: a schema and a list of tests,
    each with data and a boolean verdict."""
    if not isinstance(value, dict) or "schema" not in value or not isinstance(value.get("tests"), list):
        return False
    tests = value["tests"]
    return all(isinstance(t, dict) and "data" in t and isinstance(t.get("valid"), bool) for t in tests)


def _read(file: Path) -> Any:
    try:
        return loads_schema(read_text_file(file, "schema", MAX_SCHEMA_BYTES))
    except (UsageError, ValueError, RecursionError) as exc:
        return exc


def is_maskbench_dir(path: Path) -> bool:
    """A directory whose first readable ``*.json`` file is a MaskBench case."""
    if not path.is_dir():
        return False
    for file in schema_files(path):
        value = _read(file)
        if not isinstance(value, Exception):
            return is_maskbench_case(value)
    return False


def _group(schema: Any, data: Any) -> str:
    """The keyword an invalid document breaks, as our validator sees it."""
    try:
        found = validator_for(schema).violations(data)
    except Exception:  # noqa: BLE001 - an untrusted schema our validator cannot build: keyword unknown
        return MASKBENCH_UNKNOWN_GROUP
    return found[0].keyword if found else MASKBENCH_UNKNOWN_GROUP


def _case(file: Path, value: dict[str, Any]) -> CheckSchema:
    schema = value["schema"]
    instances = tuple(
        Instance(str(test.get("description") or f"test {i}"), test["data"], test["valid"],
                 VALID_GROUP if test["valid"] else _group(schema, test["data"]))
        for i, test in enumerate(value["tests"])
    )
    return CheckSchema(file.stem, file.parent.name, file.name, schema, instances)


def _excluded(file: Path, value: Any) -> ExcludedSchema | None:
    if isinstance(value, Exception):
        return ExcludedSchema(id=file.stem, source=file.name, reason=f"unreadable or not JSON: {value}"[:300])
    if not is_maskbench_case(value):
        return ExcludedSchema(id=file.stem, source=file.name,
                              reason="not a MaskBench case ({schema, meta, tests: [{data, valid}]})")
    if not isinstance(value["schema"], (dict, bool)):
        return ExcludedSchema(id=file.stem, source=file.name,
                              reason=f"not a schema: a JSON {type(value['schema']).__name__}")
    # the one regex guard, as for every other source: no engine (nor the
    # validator grouping the tests) ever compiles a pattern past the bound
    too_large = oversized_pattern(value["schema"])
    if too_large is not None:
        return ExcludedSchema(id=file.stem, source=file.name, reason=too_large)
    return None


def maskbench_source(path: Path, name: str | None = None, limit: int | None = None) -> CheckSource:
    """Every MaskBench file of ``path`` with its tests as documents; files of
    another shape are listed as excluded, with why."""
    schemas: list[CheckSchema] = []
    excluded: list[ExcludedSchema] = []
    for file in schema_files(path):
        if limit is not None and len(schemas) >= limit:
            break
        value = _read(file)
        why = _excluded(file, value)
        if why is not None:
            excluded.append(why)
        else:
            schemas.append(_case(file, value))
    return CheckSource(name or f"maskbench:{path.name}", "", tuple(schemas), tuple(excluded))


def read_schemas_source(path: Path, limit: int | None = None) -> CheckSource:
    """``--schemas PATH``: a directory of MaskBench cases (their tests are the
    documents), else real schemas with the oracle's instances."""
    if is_maskbench_dir(path):
        return maskbench_source(path, limit=limit)
    return schemas_source(path, limit=limit)
