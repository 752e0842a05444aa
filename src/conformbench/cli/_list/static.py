"""``conformbench list KIND`` without importing the registries (issue #58:
each ``list`` under half a second): the rows of the built-in plugins are
read from a generated table, ``cli/_list/catalogue.py``, and the registries
answer only where they could say more than it does: a plugin installed as
an entry point, or a registry already imported in this process (which may
hold a plugin registered there). An engine's status (installed, version)
is looked up here as ``Engine.availability`` and ``Engine.version`` look
it up, from the facts the table keeps of each engine class.

The table is made from the live registries by
``cli/_list/catalogue_make.py`` (``python -m
conformbench.cli._list.catalogue_make`` writes it);
tests/cli/test_list_catalogue.py fails while the file differs from what it
makes, so the table cannot go stale."""

from __future__ import annotations

import sys

from conformbench.cli._list import catalogue
from conformbench.registry import distribution_version, installed_entry_points, module_installed

__all__ = ["ENGINE_COLUMNS", "Group", "catalogue_engine_rows", "static_engine_rows", "static_groups"]

#: (table title, second column, [(name, about)]): one table of ``list KIND``
Group = tuple[str, str, list[tuple[str, str]]]
#: the columns of an engine's row, in order
ENGINE_COLUMNS = ("engine", "status", "version", "note")


def _live_only(kind: str) -> bool:
    """Whether the registries of ``kind`` must answer: one is imported
    already, or an entry point adds a name the table lacks."""
    for module, group, names in catalogue.SOURCES[kind]:
        if module in sys.modules:
            return True
        if any(ep.name not in names for ep in installed_entry_points(group)):
            return True
    return False


def static_groups(kind: str) -> list[Group] | None:
    """The tables ``list KIND`` prints, from the catalogue (None: ask the registries)."""
    if kind not in catalogue.TABLES or _live_only(kind):
        return None
    return [(title, second, list(rows)) for title, second, rows in catalogue.TABLES[kind]]


def static_engine_rows() -> list[dict[str, str]] | None:
    """``cli.engines.engine_statuses()``'s rows, from the catalogue's facts
    of each engine (None: ask the registry)."""
    return None if _live_only("engines") else catalogue_engine_rows()


def catalogue_engine_rows() -> list[dict[str, str]]:
    """Each engine's status, looked up from the catalogue's facts of it."""
    rows = []
    for name, (module, distributions, missing_note) in catalogue.ENGINES.items():
        missing = None if module_installed(module, distributions) else missing_note
        rows.append({"engine": name, "status": "installed" if missing is None else "unavailable",
                     "version": distribution_version(distributions) or "-", "note": missing or ""})
    rows.extend(dict(zip(ENGINE_COLUMNS, row, strict=True)) for row in catalogue.EXTRA_ENGINE_ROWS)
    return rows
