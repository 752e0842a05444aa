"""Opening files under an output folder without following a link.

Every file conformbench writes under ``--out`` (the replay, its journals,
reports, probe and cost files) is opened here: the last component with
``O_NOFOLLOW`` (a link planted at a file's name, dangling or not, is refused
and its target neither created nor changed), every folder between the
output folder and the file opened the same way one by one (a sub-folder that
is a link is refused too), and the file must be a regular file once open (a
FIFO planted at the name is refused, never waited on). The output folder
itself is the user's to name and may be a link.

A file read back to resume (a replay, a journal) is read through
``open_read`` for the same reason: a link at its name is refused, so a
copied run folder cannot make a resume read or append to a file elsewhere.

A link is a ``UsageError`` (one line, exit 2); any other ``OSError`` (a
read-only folder, a full disk) is raised as it is, for the command's own
line."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import IO, Literal, TextIO

from conformbench.errors import UsageError

try:
    import fcntl
except ImportError:  # pragma: no cover - not on POSIX
    fcntl = None  # type: ignore[assignment]

__all__ = ["OpenMode", "folder_fd", "link_refusal", "no_link", "open_fd", "open_out", "open_read", "open_text_out"]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)

#: create: a new file, never one that is there (the replay's header);
#: append: a journal; update: read and write in place (a resumed replay);
#: truncate: a file written whole where no temporary file can be used
OpenMode = Literal["create", "append", "update", "truncate"]
_FLAGS: dict[str, int] = {
    "create": os.O_WRONLY | os.O_CREAT | os.O_EXCL,
    "append": os.O_WRONLY | os.O_CREAT | os.O_APPEND,
    "update": os.O_RDWR,
    "truncate": os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
}
_PY_MODE = {"create": "wb", "append": "ab", "update": "r+b", "truncate": "wb"}


def link_refusal(path: Path, doing: str = "write") -> str:
    return (f"refusing to {doing} {path}: it is a link (nothing under an output folder is written "
            "or resumed through a link; remove it)")


def _is_link(path: Path, name: str | None = None, dir_fd: int | None = None) -> bool:
    try:
        info = os.lstat(name, dir_fd=dir_fd) if name is not None else os.lstat(path)
    except OSError:
        return False
    return stat.S_ISLNK(info.st_mode)


def no_link(path: Path, doing: str = "resume") -> None:
    """UsageError when ``path`` is a link (dangling or not)."""
    if _is_link(path):
        raise UsageError(link_refusal(path, doing))


def folder_fd(folder: Path, root: Path | None = None) -> int:
    """An open descriptor of ``folder``; every component below ``root`` (a
    folder ``folder`` lies in) is opened without following a link.
    UsageError for a link, or a ``folder`` outside ``root``."""
    if root is None or folder == root:
        return os.open(folder, os.O_RDONLY | _DIRECTORY)
    try:
        parts = folder.relative_to(root).parts
    except ValueError:
        raise UsageError(f"refusing to write in {folder}: it is not inside {root}") from None
    fd = os.open(root, os.O_RDONLY | _DIRECTORY)
    where = root
    for part in parts:
        where = where / part
        try:
            if part == "..":
                raise UsageError(f"refusing to write in {folder}: it climbs out of {root}")
            inner = os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW, dir_fd=fd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(where, part, fd):
                raise UsageError(link_refusal(where, "write in")) from None
            raise
        finally:
            os.close(fd)
        fd = inner
    return fd


def _checked(fd: int, path: Path, doing: str) -> int:
    """``fd`` when it is a regular file, blocking again; closed and
    UsageError otherwise."""
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UsageError(f"refusing to {doing} {path}: it is not a regular file")
    if fcntl is not None and _NONBLOCK:
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~_NONBLOCK)
    return fd


def open_fd(path: Path, mode: OpenMode, root: Path | None = None, perm: int = 0o666) -> int:
    """A descriptor of ``path`` opened for ``mode`` without following a link
    (see the module's text)."""
    dir_fd = folder_fd(path.parent, root)
    try:
        fd = os.open(path.name, _FLAGS[mode] | _NOFOLLOW | _NONBLOCK, perm, dir_fd=dir_fd)
    except OSError as exc:
        # ELOOP: a link at the name; EEXIST (create): perhaps a link, dangling or not
        if exc.errno in (errno.ELOOP, errno.EEXIST, errno.EMLINK) and _is_link(path, path.name, dir_fd):
            raise UsageError(link_refusal(path)) from None
        if exc.errno == errno.ENXIO:  # a FIFO with no reader
            raise UsageError(f"refusing to write {path}: it is not a regular file") from None
        raise
    finally:
        os.close(dir_fd)
    return _checked(fd, path, "write")


def open_out(path: Path, mode: OpenMode, root: Path | None = None) -> IO[bytes]:
    """``path`` opened (binary) for ``mode`` without following a link."""
    return os.fdopen(open_fd(path, mode, root), _PY_MODE[mode])


def open_text_out(path: Path, root: Path | None = None) -> TextIO:
    """``path`` opened as UTF-8 text to append to (a journal), without
    following a link."""
    return open(open_fd(path, "append", root), "a", encoding="utf-8")


def open_read(path: Path) -> int:
    """A descriptor of the regular file ``path`` for reading, refused when
    it is a link (a file read back to resume a run). OSError as it is for
    anything else (a missing file)."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK)
    except OSError as exc:
        if exc.errno == errno.ELOOP and _is_link(path):
            raise UsageError(link_refusal(path, "resume from")) from None
        raise
    return _checked(fd, path, "read")
