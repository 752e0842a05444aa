"""Schemas from outside the generator: a directory of ``*.json`` files, or a
JSON Lines file with one schema per line, either bare or wrapped as
``{"schema": ...}`` / ``{"json_schema": ...}`` (JSONSchemaBench's layout,
where the schema may itself be a JSON string) with an optional ``id`` or
``unique_id``. Unreadable entries come back as exclusions, never dropped.
A schema that references another file of the same directory (or a schema of
the set by its ``$id``) comes back bundled: the documents it references are
copied into its ``$defs`` (``schemas/bundle.py``); nothing is fetched.

Suites of real-world schemas ship in the package (``data/suites/<name>/``,
provenance in ``data/SOURCES.md``); ``suite_path`` finds one by name."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from conformbench.errors import UsageError
from conformbench.files import MAX_SCHEMA_BYTES, MAX_SCHEMA_DEPTH, jsonl_lines, read_text_file
from conformbench.formats.json.format import json_depth
from conformbench.jsontypes import JSONValue, is_number_error, number_error
from conformbench.registry import did_you_mean
from conformbench.schemas.bundle import SuiteIndex, bundle, file_uri
from conformbench.schemas.case import ExcludedSchema
from conformbench.schemas.schema_folder import FolderIndex, folder_files

__all__ = ["ExternalSchema", "SchemaTooDeepError", "loads_schema", "read_external", "schema_files", "suite_names", "suite_path"]

_TOO_DEEP = f"nested deeper than {MAX_SCHEMA_DEPTH} levels, the most a schema may nest"


class SchemaTooDeepError(ValueError):
    """The text nests past MAX_SCHEMA_DEPTH (checked before parsing)."""


def loads_schema(text: str) -> Any:
    """json.loads behind a fixed depth bound, so no schema reaches a
    recursion limit anywhere later (parsing, solving, rendering, storing)."""
    if json_depth(text, MAX_SCHEMA_DEPTH) > MAX_SCHEMA_DEPTH:
        raise SchemaTooDeepError(_TOO_DEEP)
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except ValueError as exc:  # an integer past the int-string limit: read as text that is not JSON
        if not is_number_error(exc):
            raise
        raise json.JSONDecodeError(number_error(exc), text, 0) from None


@dataclass(frozen=True)
class ExternalSchema:
    id: str
    schema: Any
    source: str


def _suites_folder() -> Path:
    return Path(str(resources.files("conformbench") / "data" / "suites"))


def suite_names() -> list[str]:
    """The shipped schema suites, in name order."""
    folder = _suites_folder()
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if p.is_dir() and any(p.glob("*.json")))


def suite_path(name: str) -> Path:
    """The folder of the shipped suite ``name``; UsageError with did-you-mean."""
    names = suite_names()
    if name not in names:
        known = ", ".join(names) or "none"
        raise UsageError(f"unknown schema suite {name!r}{did_you_mean(name, names)}; known: {known}")
    return _suites_folder() / name


def count_external(path: Path) -> int:
    """How many entries ``read_external`` will yield (files, or non-blank
    lines), without parsing them: the total of a progress display."""
    if path.is_dir():
        return sum(1 for _ in path.glob("*.json"))
    if not path.is_file():  # a FIFO would block the open: read_external says why
        return 0
    try:
        with path.open("rb") as lines:
            return sum(1 for line in lines if line.strip())
    except OSError:
        return 0  # read_external says why


def read_external(path: Path) -> Iterator[ExternalSchema | ExcludedSchema]:
    """Every entry of a directory of *.json or a .jsonl file, in file order,
    references to other entries of the set bundled in. A folder is read
    lazily: each file is parsed when the caller reaches it (``-n 1`` parses
    one), and a file linked twice is read once (``schemas/schema_folder.py``)."""
    if path.is_dir():
        yield from _read_folder(path)
        return
    if not path.exists():
        raise UsageError(f"no such schema file or directory: {path}")
    entries = list(_from_jsonl(path))  # a special file is refused with why
    index = SuiteIndex()
    for entry in entries:
        if isinstance(entry, ExternalSchema):
            index.add(entry.source, entry.schema)
    for entry in entries:
        yield _bundled(entry, index)


def _bundled(entry: ExternalSchema | ExcludedSchema, index: SuiteIndex) -> ExternalSchema | ExcludedSchema:
    if not isinstance(entry, ExternalSchema):
        return entry
    schema, _taken = bundle(entry.schema, file_uri(entry.source), index)
    return ExternalSchema(entry.id, schema, entry.source)


def schema_files(folder: Path) -> list[Path]:
    """The folder's *.json read once each: links that lead outside it, loop,
    or lead to a file listed before them left out (``folder_files``)."""
    return [file.path for file in folder_files(folder) if file.real is not None]


def _load(file: Path) -> JSONValue | None:
    entry = _from_file(file)
    return entry.schema if isinstance(entry, ExternalSchema) else None


def _read_folder(path: Path) -> Iterator[ExternalSchema | ExcludedSchema]:
    files = folder_files(path)
    if not files:
        raise UsageError(f"{path} holds no *.json schema files")
    index = FolderIndex(files, _load)
    for file in files:
        if file.reason is not None:
            yield ExcludedSchema(id=file.path.stem, source=file.path.name, reason=file.reason)
        else:
            yield _bundled(_from_file(file.path), index)


def _from_file(file: Path) -> ExternalSchema | ExcludedSchema:
    try:
        return ExternalSchema(file.stem, loads_schema(read_text_file(file, "schema", MAX_SCHEMA_BYTES)), file.name)
    except UsageError as exc:
        return ExcludedSchema(id=file.stem, source=file.name, reason=f"unreadable: {exc}")
    except json.JSONDecodeError as exc:
        return ExcludedSchema(
            id=file.stem, source=file.name, reason=f"not JSON: {exc.msg} at line {exc.lineno}"
        )
    except (SchemaTooDeepError, RecursionError):
        return ExcludedSchema(id=file.stem, source=file.name, reason=_TOO_DEEP)


def _from_jsonl(path: Path) -> Iterator[ExternalSchema | ExcludedSchema]:
    lines = jsonl_lines(read_text_file(path, "schema file"))
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path.name}:{number}"
        fallback = f"{path.stem}-{number}"
        if len(line) > MAX_SCHEMA_BYTES:
            yield ExcludedSchema(id=fallback, source=where,
                                 reason=f"larger than the schema limit of {MAX_SCHEMA_BYTES >> 20} MiB")
            continue
        try:
            record = loads_schema(line)
        except json.JSONDecodeError as exc:
            yield ExcludedSchema(id=fallback, source=where, reason=f"not JSON: {exc.msg}")
            continue
        except (SchemaTooDeepError, RecursionError):
            yield ExcludedSchema(id=fallback, source=where, reason=_TOO_DEEP)
            continue
        yield _unwrap(record, fallback, where)


def _unwrap(record: Any, fallback: str, where: str) -> ExternalSchema | ExcludedSchema:
    if not isinstance(record, dict) or not ({"schema", "json_schema"} & set(record)):
        return ExternalSchema(fallback, record, where)
    name = record.get("id", record.get("unique_id", fallback))
    ident = str(name) if isinstance(name, (str, int)) else fallback
    schema = record.get("schema", record.get("json_schema"))
    if isinstance(schema, str):
        try:
            schema = loads_schema(schema)
        except (SchemaTooDeepError, RecursionError):
            return ExcludedSchema(id=ident, source=where, reason=_TOO_DEEP)
        except json.JSONDecodeError as exc:
            return ExcludedSchema(id=ident, source=where, reason=f"schema string is not JSON: {exc.msg}")
    return ExternalSchema(ident, schema, where)
