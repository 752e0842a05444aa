"""Reading user files (schemas, datasets, replays, task data): every failure
is one UsageError line naming the file, never a traceback."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from conformbench.errors import UsageError

__all__ = ["JSON_SCHEMA_TEST_SUITE", "read_text_file", "shipped_data"]


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


#: the official JSON-Schema-Test-Suite copy shipped in the package (data/SOURCES.md)
JSON_SCHEMA_TEST_SUITE = "json-schema-test-suite"


def shipped_data(relative: str) -> Path:
    """A file or folder of the package's ``data/`` (third-party data listed,
    with licence and provenance, in data/SOURCES.md); UsageError when this
    install lacks it."""
    path = Path(str(resources.files("conformbench") / "data" / relative))
    if not path.exists():
        raise UsageError(f"this conformbench install has no data/{relative} (reinstall the package)")
    return path
