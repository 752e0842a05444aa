"""Per-schema outcomes kept on disk as they are made (DIR/engines-check.partial.jsonl),
so an interrupted check resumes where it stopped, and a later check with one
more engine redoes only that engine's schemas.

A full check is long only because of one engine: outlines builds an index
per schema and many builds run to the compile limit (10 s each by default).
Each line is one schema under one engine version; the first line holds the
settings every outcome depends on (tokenizer, serialisations, mask positions,
compile limit). A file written under other settings is moved aside, never
mixed in.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import IO, Literal

from pydantic import ValidationError

from conformbench.audits.engine_check.prepare import PreparedSchema
from conformbench.audits.engine_check.records import Refusal
from conformbench.audits.engine_check.summary import Judged, SchemaOutcome
from conformbench.errors import UsageError
from conformbench.files import jsonl_lines, read_bytes_file, write_files
from conformbench.nofollow import open_text_out
from conformbench.records.base import FrozenRecord

__all__ = ["PARTIAL_NAME", "OutcomeStore", "StoreSettings"]

PARTIAL_NAME = "engines-check.partial.jsonl"
_FORMAT = "conformbench.engines-check-partial/1"


class StoreSettings(FrozenRecord):
    """What a stored outcome depends on besides the engine and the schema."""

    format: str = _FORMAT
    tokenizer: str
    n_vocab: int
    serialisations: list[str]
    mask_positions: int
    compile_timeout_s: float | None


class _Verdict(FrozenRecord):
    verdict: Literal["ok", "over", "under"]
    #: the serialisation judged wrongly (None when ok)
    serialisation: str | None
    detail: str


class _Stored(FrozenRecord):
    engine: str
    version: str | None
    source: str
    schema_id: str
    #: sha256 of the schema and its instances: an edited suite file is checked again
    digest: str
    refusal: Refusal | None
    compile_seconds: float
    #: one per instance, in the schema's instance order
    verdicts: list[_Verdict]
    mask_seconds: list[float]


def _digest(prepared: PreparedSchema) -> str:
    schema = prepared.schema
    payload = [schema.schema, [[i.value, i.valid, i.group] for i in schema.instances]]
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=repr).encode()).hexdigest()[:16]


def _key(engine: str, version: str | None, source: str, schema_id: str) -> tuple[str, str, str, str]:
    return (engine, version or "", source, schema_id)


class OutcomeStore:
    """Read the outcomes kept under ``out``, then append each new one."""

    def __init__(self, out: Path, settings: StoreSettings) -> None:
        self.path = out / PARTIAL_NAME
        self.moved_aside: Path | None = None
        self._stored: dict[tuple[str, str, str, str], _Stored] = {}
        self._load(settings)
        self._file: IO[str] | None = None
        self._settings = settings

    def _load(self, settings: StoreSettings) -> None:
        if not self.path.exists() and not self.path.is_symlink():  # a link is refused by the read
            return
        data = read_bytes_file(self.path, "engine check store", links=False)
        if data and not data.endswith(b"\n"):  # an interrupted write: its line is redone
            data = data[: data.rfind(b"\n") + 1]
            write_files({self.path: data})
        lines = jsonl_lines(data.decode("utf-8", "replace"))
        try:
            same = bool(lines) and StoreSettings.model_validate_json(lines[0]) == settings
        except ValidationError:
            same = False
        if not same:
            self.moved_aside = self.path.with_name(self.path.name + ".old")
            self.path.replace(self.moved_aside)
            return
        for line in lines[1:]:
            try:
                stored = _Stored.model_validate_json(line)
            except ValidationError:
                continue  # not an outcome of this version: checked again
            self._stored[_key(stored.engine, stored.version, stored.source, stored.schema_id)] = stored

    def __len__(self) -> int:
        return len(self._stored)

    def get(self, engine: str, version: str | None, source: str, prepared: PreparedSchema) -> SchemaOutcome | None:
        stored = self._stored.get(_key(engine, version, source, prepared.schema.id))
        if stored is None or stored.digest != _digest(prepared):
            return None
        if stored.refusal is None and len(stored.verdicts) != len(prepared.documents):
            return None
        judged = [_judged(prepared, index, verdict) for index, verdict in enumerate(stored.verdicts)]
        return SchemaOutcome(prepared.schema, stored.refusal, stored.compile_seconds, judged,
                             list(stored.mask_seconds))

    def put(self, engine: str, version: str | None, source: str, prepared: PreparedSchema,
            outcome: SchemaOutcome) -> None:
        stored = _Stored(
            engine=engine, version=version, source=source, schema_id=prepared.schema.id,
            digest=_digest(prepared), refusal=outcome.refusal, compile_seconds=outcome.compile_seconds,
            verdicts=[_Verdict(verdict=j.verdict, serialisation=j.document.serialisation if j.document else None,
                               detail=j.detail) for j in outcome.judged],
            mask_seconds=outcome.mask_seconds,
        )
        self._stored[_key(engine, version, source, prepared.schema.id)] = stored
        self._write(stored.model_dump_json())

    def _write(self, line: str) -> None:
        if self._file is None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fresh = not self.path.exists() or self.path.stat().st_size == 0
                self._file = open_text_out(self.path)  # a link there is refused, never followed
            except OSError as exc:
                raise UsageError(f"cannot write {self.path}: {exc.strerror or exc}") from None
            if fresh:
                self._file.write(self._settings.model_dump_json() + "\n")
        self._file.write(line + "\n")
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def _judged(prepared: PreparedSchema, index: int, verdict: _Verdict) -> Judged:
    documents = prepared.documents[index]
    document = next((d for d in documents if d.serialisation == verdict.serialisation), None)
    return Judged(documents[0].instance if documents else prepared.schema.instances[index],
                  verdict.verdict, document, verdict.detail)
