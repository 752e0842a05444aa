"""Reading and appending replay files (JSON Lines, header first).

Every record is flushed as it is written and fsync'd every few records or
seconds, so an interrupted run loses at most its last line. A truncated last
line (no newline) is tolerated when reading: it is reported and cut off
before a resumed run appends.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from pydantic import BaseModel, TypeAdapter, ValidationError

from conformbench.errors import UsageError
from conformbench.runner.records import (
    REPLAY_FORMAT,
    GenerationRecord,
    ItemRecord,
    ModelRecord,
    ReplayHeader,
    ReplayRecord,
)

__all__ = ["ReplayContents", "read_replay", "ReplayWriter", "REPLAY_NAME"]

REPLAY_NAME = "replay.jsonl"

_ADAPTER: TypeAdapter[ReplayRecord] = TypeAdapter(ReplayRecord)


@dataclass
class ReplayContents:
    path: Path
    header: ReplayHeader
    models: list[ModelRecord] = field(default_factory=list)
    items: list[ItemRecord] = field(default_factory=list)
    generations: list[GenerationRecord] = field(default_factory=list)
    #: byte length of the complete lines (where appending resumes)
    good_size: int = 0
    #: bytes of an incomplete last line that was ignored (0: none)
    truncated_tail: int = 0


def _check_format(header: ReplayHeader, path: Path) -> None:
    family, _, version = header.format.rpartition("/")
    ours, _, our_version = REPLAY_FORMAT.rpartition("/")
    if family != ours or version.split(".")[0] != our_version.split(".")[0]:
        raise UsageError(
            f"{path}: replay format {header.format!r} is not supported "
            f"(this conformbench reads {REPLAY_FORMAT!r})"
        )


def _parse_line(raw: bytes, path: Path, lineno: int) -> ReplayRecord:
    try:
        return _ADAPTER.validate_python(json.loads(raw))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise UsageError(f"{path}:{lineno}: not a JSON line; the replay is damaged") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise UsageError(
            f"{path}:{lineno}: not a replay record ({where}: {first['msg']})"
        ) from None


def read_replay(path: Path) -> ReplayContents:
    """Load a replay; a damaged line other than an unterminated last one is
    a UsageError naming the line."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    end = data.rfind(b"\n") + 1
    lines = data[:end].split(b"\n")[:-1]
    records = [_parse_line(raw, path, i + 1) for i, raw in enumerate(lines) if raw.strip()]
    if not records or not isinstance(records[0], ReplayHeader):
        raise UsageError(f"{path}: not a conformbench replay (no header line)")
    header = records[0]
    _check_format(header, path)
    out = ReplayContents(path, header, good_size=end, truncated_tail=len(data) - end)
    for lineno, rec in enumerate(records[1:], start=2):
        if isinstance(rec, ModelRecord):
            out.models.append(rec)
        elif isinstance(rec, ItemRecord):
            out.items.append(rec)
        elif isinstance(rec, GenerationRecord):
            out.generations.append(rec)
        else:
            raise UsageError(f"{path}:{lineno}: a second header line")
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
        writer = cls(path.open("xb"))
        writer.write(header)
        writer.sync()
        return writer

    @classmethod
    def resume(cls, path: Path, good_size: int) -> ReplayWriter:
        """Append after the first ``good_size`` bytes, cutting off an
        unterminated last line."""
        fh = path.open("r+b")
        fh.truncate(good_size)
        fh.seek(good_size)
        return cls(fh)

    def write(self, record: BaseModel) -> None:
        self._fh.write(record.model_dump_json().encode("utf-8") + b"\n")
        self._fh.flush()
        self._pending += 1
        overdue = time.monotonic() - self._last_sync >= self._fsync_seconds
        if self._pending >= self._fsync_every or overdue:
            self.sync()

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
