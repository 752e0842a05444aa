"""A folder of ``*.json`` schemas, read lazily and once per real file.

``folder_files`` lists the folder's files without reading them, each with
its real path or why it is left out: a link that loops (``Path.resolve``
raises on it), a link to a file outside the folder (never followed), or a
link to a file listed before it (the same schema again: one 7.8 MiB schema
and 300 links to it took `-n 1` to 4.6 GB when each was parsed). The
commands that read a folder (``dataset build --schemas``, ``engines cost
--schemas``, ``engines check --schemas``) parse an item's schema only when
they reach it, so ``-n 1`` parses one.

``FolderIndex`` is the suite index bundling reads from (``schemas/bundle.py``):
a document another one references is parsed when the reference is met, by
file name, or by its ``$id`` (every file's ``$id`` is collected, one file at
a time, the first time a reference names no file of the folder); the few
parsed for references are kept, the rest dropped once yielded."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urldefrag

from conformbench.jsontypes import JSONValue
from conformbench.schemas.bundle import SuiteIndex, file_uri, id_of

__all__ = ["FolderFile", "FolderIndex", "folder_files"]

#: referenced documents kept parsed at once (each at most 8 MiB as text)
_KEPT = 8
_FILE_PREFIX = file_uri("")


@dataclass(frozen=True)
class FolderFile:
    path: Path
    #: its real path; None when it is left out
    real: Path | None
    #: why it is left out (None: it is read)
    reason: str | None = None


def _real(file: Path) -> Path | str:
    """The file's real path, or why it has none to follow."""
    try:
        return file.resolve(strict=True)
    except RuntimeError:  # Python 3.11: "Symlink loop from ..."
        return "a link that loops (never followed)"
    except OSError as exc:  # ELOOP on other versions, a dangling link
        return "a link that loops (never followed)" if exc.errno == 40 else f"unreadable: {exc.strerror or exc}"


def folder_files(folder: Path) -> list[FolderFile]:
    """The folder's ``*.json`` in name order, read or left out with why."""
    try:
        root = folder.resolve(strict=True)
    except (RuntimeError, OSError):
        return []
    seen: dict[Path, str] = {}
    out: list[FolderFile] = []
    for file in sorted(folder.glob("*.json")):
        real = _real(file)
        if isinstance(real, str):
            out.append(FolderFile(file, None, real))
        elif not real.is_relative_to(root):
            out.append(FolderFile(file, None, "a link to a file outside the folder (not followed)"))
        elif real in seen:
            out.append(FolderFile(file, None, f"the same file as {seen[real]} (a link to it): read once"))
        else:
            seen[real] = file.name
            out.append(FolderFile(file, real))
    return out


class FolderIndex(SuiteIndex):
    """The folder's documents for bundling, each parsed when a reference
    first needs it (``load``: a file's document, or None when unreadable)."""

    def __init__(self, files: list[FolderFile], load: Callable[[Path], JSONValue | None]) -> None:
        super().__init__()
        #: every file name a reference may give, links to read files included
        self._by_name: dict[str, Path] = {f.path.name: f.path for f in files if f.real is not None}
        self._unique = list(self._by_name)
        for f in files:
            if f.real is None and f.reason is not None and f.reason.startswith("the same file as "):
                self._by_name[f.path.name] = f.path
        self._load = load
        self._kept: OrderedDict[str, JSONValue] = OrderedDict()
        self._ids: dict[str, str] | None = None

    def _document(self, name: str) -> JSONValue | None:
        path = self._by_name.get(name)
        if path is None:
            return None
        real = str(path.resolve())
        if real in self._kept:
            self._kept.move_to_end(real)
            return self._kept[real]
        document = self._load(path)
        if document is not None:
            self._kept[real] = document
            if len(self._kept) > _KEPT:
                self._kept.popitem(last=False)
        return document

    def _id_names(self) -> dict[str, str]:
        """Each ``$id`` (its base) -> the first file stating it, collected
        once, one file parsed at a time."""
        if self._ids is None:
            self._ids = {}
            for name in self._unique:
                document = self._load(self._by_name[name])
                ident = id_of(document)
                if ident:
                    self._ids.setdefault(urldefrag(ident)[0], name)
        return self._ids

    def find(self, uri: str) -> tuple[JSONValue, str] | None:
        if uri.startswith(_FILE_PREFIX):
            name: str | None = unquote(uri[len(_FILE_PREFIX):])
        else:
            name = self._id_names().get(uri)
        document = None if name is None else self._document(name)
        return None if document is None or name is None else (document, name)
