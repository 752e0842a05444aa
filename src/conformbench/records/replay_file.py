"""Reading and appending replay files (JSON Lines, header first).

Every record is flushed as it is written and fsync'd every few records or
seconds, so an interrupted run loses at most its last line. A truncated last
line (no newline) is tolerated when reading: it is reported and cut off
before a resumed run appends.

A replay is append-only, so a resumed run that redoes a failed generation
(``finish_reason="error"``) writes a second record for the same key. Readers
see one record per key: the last answer, or the last error when every try
failed; the records it replaced are kept aside in ``superseded``.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from conformbench import stopping
from conformbench.errors import UsageError
from conformbench.files import read_bytes_file
from conformbench.jsontypes import number_error
from conformbench.nofollow import open_out
from conformbench.records.migrations import ReplayFormatError
from conformbench.records.replay import (
    GenerationRecord,
    ItemRecord,
    ModelRecord,
    ReplayHeader,
    ReplayRecord,
    as_stored,
)

__all__ = ["REPLAY_NAME", "ReplayContents", "ReplayWriter", "latest_generations", "read_replay"]

REPLAY_NAME = "replay.jsonl"

_ADAPTER: TypeAdapter[ReplayRecord] = TypeAdapter(ReplayRecord)
#: the record a line's ``kind`` names: validated as that record alone, so a
#: bad field is reported where it is (``step.seconds``), not as the first
#: union member's mismatch (``ReplayHeader.kind``)
_BY_KIND: dict[str, type[BaseModel]] = {"header": ReplayHeader, "model": ModelRecord, "item": ItemRecord,
                                        "generation": GenerationRecord}
_TITLES = {record.__name__ for record in _BY_KIND.values()}
_SURROGATE = re.compile("[\ud800-\udfff]")
_SANITISED = "the writer replaced text that is not valid Unicode with U+FFFD"


@dataclass
class ReplayContents:
    path: Path
    header: ReplayHeader
    models: list[ModelRecord] = field(default_factory=list)
    items: list[ItemRecord] = field(default_factory=list)
    #: one record per key (see ``latest_generations``), in first-written order
    generations: list[GenerationRecord] = field(default_factory=list)
    #: earlier records of a key that a later try replaced
    superseded: list[GenerationRecord] = field(default_factory=list)
    #: byte length of the complete lines (where appending resumes)
    good_size: int = 0
    #: bytes of an incomplete last line that was ignored (0: none)
    truncated_tail: int = 0


def _validate(data: Any) -> ReplayRecord:
    kind = data.get("kind") if isinstance(data, dict) else None
    record = _BY_KIND.get(kind) if isinstance(kind, str) else None
    if record is None:  # no kind, or one no record has: the union says why
        return _ADAPTER.validate_python(data)
    return record.model_validate(data)  # type: ignore[return-value]  # one of ReplayRecord's members


def _parse_line(raw: bytes, path: Path, lineno: int) -> ReplayRecord:
    try:
        return _validate(json.loads(raw))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise UsageError(f"{path}:{lineno}: not a JSON line; the replay is damaged") from None
    except RecursionError:
        raise UsageError(f"{path}:{lineno}: nested too deeply; the replay is damaged") from None
    except ReplayFormatError as exc:  # a newer or foreign header layout
        raise UsageError(f"{path}: {exc}") from None
    except ValidationError as exc:  # before ValueError, its base class
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        if exc.title in _TITLES:  # validated as the record its kind names: say which
            where = f"{exc.title} {where}".strip()
        raise UsageError(
            f"{path}:{lineno}: not a replay record ({where}: {first['msg']})"
        ) from None
    except ValueError as exc:  # an integer past Python's int-string limit (4300 digits)
        raise UsageError(f"{path}:{lineno}: {number_error(exc)}; the replay is damaged") from None


def latest_generations(
    records: list[GenerationRecord],
) -> tuple[list[GenerationRecord], list[GenerationRecord]]:
    """(kept, superseded): one record per key, the last one that is not an
    error, else the last error; kept in the order keys first appear."""
    kept: dict[tuple[str, str, str, str], GenerationRecord] = {}
    superseded: list[GenerationRecord] = []
    for rec in records:
        old = kept.get(rec.key)
        if old is not None and old.finish_reason != "error" and rec.finish_reason == "error":
            superseded.append(rec)  # a failed retry never replaces an answer
            continue
        if old is not None:
            superseded.append(old)
        kept[rec.key] = rec
    return list(kept.values()), superseded


def _add_model(models: list[ModelRecord], rec: ModelRecord) -> None:
    """Append ``rec``; a final record replaces its run's first one."""
    if rec.final:
        for i in range(len(models) - 1, -1, -1):
            if models[i].label == rec.label and not models[i].final:
                models[i] = rec
                return
    models.append(rec)


def read_replay(path: Path, *, links: bool = True) -> ReplayContents:
    """Load a replay; a damaged line other than an unterminated last one is
    a UsageError naming the line. ``links=False``: a replay read back to
    resume, refused when it is a link (``nofollow``)."""
    data = read_bytes_file(path, "replay file", links=links)
    end = data.rfind(b"\n") + 1
    lines = data[:end].split(b"\n")[:-1]
    records = [_parse_line(raw, path, i + 1) for i, raw in enumerate(lines) if raw.strip()]
    if not records or not isinstance(records[0], ReplayHeader):
        raise UsageError(f"{path}: not a conformbench replay (no header line)")
    header = records[0]
    out = ReplayContents(path, header, good_size=end, truncated_tail=len(data) - end)
    for lineno, rec in enumerate(records[1:], start=2):
        if isinstance(rec, ModelRecord):
            _add_model(out.models, rec)
        elif isinstance(rec, ItemRecord):
            out.items.append(rec)
        elif isinstance(rec, GenerationRecord):
            out.generations.append(rec)
        else:
            raise UsageError(f"{path}:{lineno}: a second header line")
    out.generations, out.superseded = latest_generations(out.generations)
    return out


class ReplayWriter:
    """Appends records to a replay, flushing each one."""

    def __init__(self, fh: IO[bytes], fsync_every: int = 32, fsync_seconds: float = 5.0) -> None:
        self._fh = fh
        self._fsync_every = fsync_every
        self._fsync_seconds = fsync_seconds
        self._pending = 0
        self._last_sync = time.monotonic()

    @classmethod
    def create(cls, path: Path, header: ReplayHeader) -> ReplayWriter:
        """Start a new replay (the path must not hold one)."""
        writer = cls(open_out(path, "create"))
        writer.write(header)
        writer.sync()
        return writer

    @classmethod
    def resume(cls, path: Path, good_size: int) -> ReplayWriter:
        """Append after the first ``good_size`` bytes, cutting off an
        unterminated last line. A link at ``path`` is refused, never
        followed (``nofollow``): a copied run folder cannot make a resume
        append to a file elsewhere."""
        fh = open_out(path, "update")
        fh.truncate(good_size)
        fh.seek(good_size)
        return cls(fh)

    def write(self, record: BaseModel) -> None:
        """Append ``record``; a generation as a replay stores it (``as_stored``)."""
        if isinstance(record, GenerationRecord):
            record = as_stored(record)
        try:
            line = record.model_dump_json().encode("utf-8")
        except ValueError:  # PydanticSerializationError: a lone surrogate in some text
            line = _sanitised_line(record)
        self._fh.write(line + b"\n")
        self._fh.flush()
        self._pending += 1
        overdue = time.monotonic() - self._last_sync >= self._fsync_seconds
        if self._pending >= self._fsync_every or overdue:
            self.sync()
        stopping.checkpoint()  # a stop a finalizer swallowed lands here, after a whole record

    def sync(self) -> None:
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self._pending = 0
        self._last_sync = time.monotonic()

    def close(self) -> None:
        if not self._fh.closed:
            self.sync()
            self._fh.close()

    def __enter__(self) -> ReplayWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _clean(value: Any) -> Any:
    """``value`` with every lone surrogate replaced by U+FFFD."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_clean(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


def _sanitised_line(record: BaseModel) -> bytes:
    """The record as a JSON line that can be written, whatever text it holds;
    a generation says in its ``error`` that its text was changed."""
    data = _clean(record.model_dump(mode="json"))
    if data.get("kind") == "generation":
        data["error"] = "; ".join(filter(None, [data.get("error"), _SANITISED]))
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
