"""Reading user files (schemas, datasets, replays, task data): every failure
is one UsageError line naming the file, never a traceback."""

from __future__ import annotations

from pathlib import Path

from conformbench.errors import UsageError

__all__ = ["read_text_file"]


def read_text_file(path: Path, kind: str = "", max_bytes: int | None = None) -> str:
    """The UTF-8 text of ``path``. ``kind`` ("dataset", "replay file") goes
    before the path in messages; a file over ``max_bytes`` is refused before
    it is read."""
    named = f"{kind} {path}" if kind else str(path)
    try:
        if max_bytes is not None and path.stat().st_size > max_bytes:
            raise UsageError(f"{named} is larger than {max_bytes // (1024 * 1024)} MiB")
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read {named}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise UsageError(f"{named} is not UTF-8 text") from None
