"""Writing an imported replay: a fresh ``DIR/replay.jsonl`` (never over one
that exists, never half of one), and the file facts every importer records."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel

from conformbench.errors import UsageError
from conformbench.files import atomic_path
from conformbench.records.replay import ReplayHeader
from conformbench.records.replay_file import REPLAY_NAME, ReplayWriter

__all__ = ["file_created", "write_replay"]


def file_created(path: Path) -> str:
    """The source file's modification time (UTC, ISO 8601): the same file
    gives the same header, so an import is byte-identical when repeated."""
    stamp = datetime.fromtimestamp(path.stat().st_mtime, tz=UTC).replace(microsecond=0)
    return stamp.isoformat()


def write_replay(out_dir: Path, header: ReplayHeader, records: Iterable[BaseModel]) -> Path:
    """Write ``out_dir/replay.jsonl`` whole or not at all (a temporary file
    beside it, linked into place once every record is written: an import
    that fails half-way leaves no replay to resume or score); a UsageError
    when one is there already or the directory cannot be written."""
    path = out_dir / REPLAY_NAME
    exists = f"{path} already exists; import into an empty directory"
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        if path.exists():  # before any work; atomic_path checks again at the end
            raise UsageError(exists)
        with atomic_path(path, exclusive=True) as tmp, ReplayWriter(tmp.open("wb")) as writer:
            writer.write(header)
            for record in records:
                writer.write(record)
    except FileExistsError:
        raise UsageError(exists) from None
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path
