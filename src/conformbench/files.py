"""Reading and writing user files: every failure is one UsageError line
naming the file, never a traceback or a hang.

Reads take regular files only (a FIFO would block ``open`` forever, a link
to ``/dev/zero`` would read until memory runs out) and read at most a byte
limit, counted on the bytes read, not on what ``stat`` claims. Writes go to
a temporary file in the same folder, renamed over the target once every
file of the set is written: a kill or a full disk leaves the old set or the
new one, never a mix or a truncated file. Archives (an Inspect ``.eval``
zip, a ``.gz`` file) are inflated with a bound on the bytes they inflate
to, counted while inflating, never trusted from their headers. JSONL is
split on ``\n`` only: ``str.splitlines`` also breaks at U+2028, U+2029,
U+0085 and five control characters, which JSON allows raw in strings."""

from __future__ import annotations

import hashlib
import io
import json
import os
import secrets
import stat
import tempfile
import zipfile
import zlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from functools import lru_cache
from importlib import resources
from pathlib import Path

from conformbench.errors import UsageError
from conformbench.nofollow import folder_fd, link_refusal, open_read

__all__ = ["JSON_SCHEMA_TEST_SUITE", "MAX_FILE_BYTES", "MAX_INFLATED_BYTES", "MAX_SCHEMA_BYTES",
           "MAX_SCHEMA_DEPTH", "atomic_path", "check_zip_file", "file_sha256", "inflate", "inside_folder",
           "jsonl_error", "jsonl_lines", "read_bytes_file", "read_text_file", "regular_file", "shipped_data", "write_files"]

#: the most bytes any user file is read to (replays and datasets included)
MAX_FILE_BYTES = 1 << 30
#: the most bytes an archive (all members of a zip, a .gz file) is inflated
#: to: an Inspect log is parsed whole after, at several times its size
MAX_INFLATED_BYTES = 256 << 20
#: the most bytes of one schema: real schemas are under 1 MiB (the largest
#: shipped one is 115 KB); a 52 MB schema took dataset build to 3 GB
MAX_SCHEMA_BYTES = 8 << 20
#: the deepest bracket nesting of one schema's JSON text (the deepest shipped
#: schema nests 19): a fixed bound, because whether a deeper one hit Python's
#: recursion limit depended on how deep the caller's stack already was
MAX_SCHEMA_DEPTH = 100


def _mib(size: int) -> str:
    return f"{size / (1 << 20):g} MiB"


def regular_file(path: Path, named: str = "", *, links: bool = True) -> os.stat_result:
    """The stat of ``path`` (links followed unless ``links`` is False: a
    link is then refused); UsageError unless it is a regular file. Checked
    before ``open``, which a FIFO would block."""
    named = named or str(path)
    try:
        info = path.stat() if links else path.lstat()
    except OSError as exc:
        raise UsageError(f"cannot read {named}: {exc.strerror or exc}") from None
    if stat.S_ISLNK(info.st_mode):
        raise UsageError(link_refusal(path, "resume from"))
    if not stat.S_ISREG(info.st_mode):
        kind = "a folder" if stat.S_ISDIR(info.st_mode) else "a FIFO" if stat.S_ISFIFO(info.st_mode) \
            else "a device" if stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode) else "a special file"
        raise UsageError(f"{named} is {kind}, not a regular file")
    return info


def read_bytes_file(path: Path, kind: str = "", max_bytes: int | None = None, *, links: bool = True) -> bytes:
    """The bytes of the regular file ``path``, at most ``max_bytes``
    (default ``MAX_FILE_BYTES``); UsageError beyond. ``links=False``: a file
    read back to resume a run, refused when it is a link (``nofollow``)."""
    named = f"{kind} {path}" if kind else str(path)
    limit = MAX_FILE_BYTES if max_bytes is None else max_bytes
    info = regular_file(path, named, links=links)
    if info.st_size > limit:
        raise UsageError(f"{named} is larger than {_mib(limit)} ({_mib(info.st_size)})")
    try:
        # O_NONBLOCK: a FIFO swapped in after the stat must not block the open
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)) if links else open_read(path)
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                raise UsageError(f"{named} is not a regular file")
            data = fh.read(limit + 1)
    except OSError as exc:
        raise UsageError(f"cannot read {named}: {exc.strerror or exc}") from None
    if len(data) > limit:  # the file grew after the stat
        raise UsageError(f"{named} is larger than {_mib(limit)}")
    if path.name.endswith(".gz"):  # inflated, at most MAX_INFLATED_BYTES (or the caller's smaller limit)
        return inflate(data, named, min(limit, MAX_INFLATED_BYTES), gzip=True)
    return data


def inflate(data: bytes, named: str, limit: int = MAX_INFLATED_BYTES, *, gzip: bool = False) -> bytes:
    """``data`` inflated (gzip, else raw deflate), at most ``limit`` bytes,
    counted while inflating: a bomb stops at the limit, with one line."""
    engine = zlib.decompressobj(16 + zlib.MAX_WBITS if gzip else -zlib.MAX_WBITS)
    try:
        out = engine.decompress(data, limit + 1)
    except zlib.error as exc:
        raise UsageError(f"{named} is not valid {'gzip' if gzip else 'deflate'} data ({exc})") from None
    if len(out) > limit:
        raise UsageError(f"{named} inflates to more than {_mib(limit)}")
    if not engine.eof:
        raise UsageError(f"{named} is cut short (its compressed data ends early)")
    return out


def check_zip_file(path: Path, kind: str = "", limit: int = MAX_INFLATED_BYTES) -> None:
    """UsageError unless ``path`` is a regular file, a zip archive whose
    members together inflate to at most ``limit`` bytes. Every member is
    inflated (and dropped) to count: a header's stated size may lie."""
    named = f"{kind} {path}" if kind else str(path)
    data = read_bytes_file(path, kind)
    total = 0
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for member in archive.infolist():
                if total + member.file_size > limit:
                    raise UsageError(f"{named}: its members inflate to more than {_mib(limit)}")
                with archive.open(member) as fh:
                    while block := fh.read(1 << 20):
                        total += len(block)
                        if total > limit:
                            raise UsageError(f"{named}: its members inflate to more than {_mib(limit)}")
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, ValueError) as exc:
        raise UsageError(f"{named} is not a readable zip archive ({exc})") from None


def jsonl_lines(text: str) -> list[str]:
    """The lines of JSONL text, split on ``\n`` only (a ``\r`` before it is
    JSON whitespace, left to the parser). ``str.splitlines`` would also
    split at U+2028, U+2029, U+0085 and \x0b, \x0c, \x1c-\x1e, which JSON
    allows unescaped inside strings."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def jsonl_error(exc: Exception) -> str:
    """Why one JSONL line is not JSON, placed by column alone: the caller
    names the file's line, and json's own "line 1 column 30" would be a
    second, different line number in the same message."""
    if isinstance(exc, json.JSONDecodeError):
        where = f"column {exc.colno}" if exc.lineno == 1 else f"position {exc.pos + 1}"
        return f"{exc.msg} at {where}"
    return str(exc)[:120]


def inside_folder(folder: Path, path: Path) -> Path:
    """``path`` when its folder, links resolved, lies inside ``folder``'s:
    a writer that puts files under an output folder never follows a link
    out of it (``os.replace`` onto ``path`` replaces a link there, never
    writes through it). UsageError otherwise."""
    root = folder.resolve()
    where = path.parent.resolve()
    if where != root and root not in where.parents:
        raise UsageError(f"refusing to write {path}: {path.parent} is a link out of {folder}")
    return path


def read_text_file(path: Path, kind: str = "", max_bytes: int | None = None, *, links: bool = True) -> str:
    """The UTF-8 text of the regular file ``path``. ``kind`` ("dataset",
    "replay file") goes before the path in messages; a file over
    ``max_bytes`` (default ``MAX_FILE_BYTES``) is refused; ``links=False``:
    a link is refused (a file read back to resume)."""
    named = f"{kind} {path}" if kind else str(path)
    try:
        return read_bytes_file(path, kind, max_bytes, links=links).decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{named} is not UTF-8 text") from None


def _file_mode() -> int:
    """The mode ``open(path, "w")`` would give a new file: 0666 less the umask."""
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


def _stage(dir_fd: int, path: Path, data: bytes) -> str:
    """``data`` in a fresh temporary file beside ``path`` (created with
    O_EXCL | O_NOFOLLOW in the open folder ``dir_fd``): its name."""
    while True:
        name = f".{path.name}.{secrets.token_hex(6)}.tmp"
        try:
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
                         _file_mode(), dir_fd=dir_fd)
        except FileExistsError:
            continue
        break
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        os.unlink(name, dir_fd=dir_fd)
        raise
    return name


def write_files(texts: Mapping[Path, str | bytes], root: Path | None = None) -> None:
    """Write every file of ``texts`` whole, or none of them: each goes to a
    temporary file beside it, and the renames happen once all are written.
    No link is followed: a link at a file's name is replaced, never written
    through, and a folder between ``root`` (the output folder) and a file
    that is a link is refused (``nofollow.folder_fd``). A full disk or a
    read-only folder is one UsageError line."""
    staged: list[tuple[int, str, Path]] = []
    current: Path | None = None
    try:
        for path, text in texts.items():
            current = path
            dir_fd = folder_fd(path.parent, root)
            try:
                staged.append((dir_fd, _stage(dir_fd, path, text.encode("utf-8") if isinstance(text, str) else text),
                               path))
            except BaseException:
                os.close(dir_fd)
                raise
        for dir_fd, tmp, path in staged:
            current = path
            os.replace(tmp, path.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)  # replaces a link, never follows it
    except OSError as exc:
        raise UsageError(f"cannot write {current}: {exc.strerror or exc}") from None
    finally:
        for dir_fd, tmp, _path in staged:
            with suppress(FileNotFoundError):
                os.unlink(tmp, dir_fd=dir_fd)
            os.close(dir_fd)


@contextmanager
def atomic_path(path: Path, *, exclusive: bool = False) -> Iterator[Path]:
    """A temporary file beside ``path`` for a writer that streams (an
    imported replay): when the block ends without an exception it is
    fsync'd and renamed onto ``path``, otherwise removed, so ``path`` never
    holds half a file. ``exclusive``: never replace a file that is there by
    then (FileExistsError), as ``open(path, "x")`` would not. A link at
    ``path`` is replaced, never written through. OSError as is: callers say
    which command failed."""
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.fchmod(fd, _file_mode())
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        with tmp.open("rb") as fh:
            os.fsync(fh.fileno())
        if exclusive:
            os.link(tmp, path, follow_symlinks=False)  # FileExistsError when one is there (a link too)
        else:
            os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


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


@lru_cache(maxsize=64)
def _sha256(path: str, mtime_ns: int, size: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def file_sha256(path: Path) -> str:
    """sha256 of a file, computed once per (path, mtime, size) in a process:
    hashing a 500 MB model takes seconds and backends ask for it often."""
    st = path.stat()
    return _sha256(str(path.resolve()), st.st_mtime_ns, st.st_size)
