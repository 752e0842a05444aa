"""Writing an imported replay: a fresh ``DIR/replay.jsonl`` (never over one
that exists), and the file facts every importer records."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel

from conformbench.backends.runinfo import file_sha256
from conformbench.errors import UsageError
from conformbench.records.replay import ReplayHeader
from conformbench.records.replay_file import REPLAY_NAME, ReplayWriter

__all__ = ["file_created", "file_sha256", "write_replay"]


def file_created(path: Path) -> str:
    """The source file's modification time (UTC, ISO 8601): the same file
    gives the same header, so an import is byte-identical when repeated."""
    stamp = datetime.fromtimestamp(path.stat().st_mtime, tz=UTC).replace(microsecond=0)
    return stamp.isoformat()


def write_replay(out_dir: Path, header: ReplayHeader, records: Iterable[BaseModel]) -> Path:
    """Write ``out_dir/replay.jsonl``; a UsageError when one is there already
    or the directory cannot be written."""
    path = out_dir / REPLAY_NAME
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        writer = ReplayWriter.create(path, header)
    except FileExistsError:
        raise UsageError(f"{path} already exists; import into an empty directory") from None
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
    with writer:
        for record in records:
            writer.write(record)
    return path
