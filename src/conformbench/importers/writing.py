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
from conformbench.records.replay_file import REPLAY_NAME, ReplayWriter, read_replay

__all__ = ["file_created", "write_replay"]


def file_created(path: Path) -> str:
    """The source file's modification time (UTC, ISO 8601): the same file
    gives the same header, so an import is byte-identical when repeated."""
    stamp = datetime.fromtimestamp(path.stat().st_mtime, tz=UTC).replace(microsecond=0)
    return stamp.isoformat()


def _readable(tmp: Path, path: Path) -> None:
    """Read the written replay back as ``score`` will: a value the records
    took but their file form cannot hold (a NaN is written as null) would
    leave a replay no command reads. Refused before it is linked into place."""
    try:
        read_replay(tmp)
    except UsageError as exc:
        detail = str(exc).replace(str(tmp), path.name)
        raise UsageError(f"the import would write a replay no command can read back ({detail}); "
                         "nothing was written") from None


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
        with atomic_path(path, exclusive=True) as tmp:
            with ReplayWriter(tmp.open("wb")) as writer:
                writer.write(header)
                for record in records:
                    writer.write(record)
            _readable(tmp, path)
    except FileExistsError:
        raise UsageError(exists) from None
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path
