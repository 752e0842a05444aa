"""``conformbench list KIND`` without importing the registries (issue #58:
each ``list`` under half a second): the rows of the built-in plugins are
read from a generated table, ``cli/_list_catalogue.py``, and the registries
answer only where they could say more than it does: a plugin installed as
an entry point, or a registry already imported in this process (which may
hold a plugin registered there). An engine's status (installed, version)
is looked up here as ``Engine.availability`` and ``Engine.version`` look
it up, from the facts the table keeps of each engine class.

The table is made from the live registries by ``catalogue_source``
(``python -m conformbench.cli._list_static`` writes it);
tests/cli/test_list_catalogue.py fails while the file differs from what it
makes, so the table cannot go stale."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import pprint
import sys
from pathlib import Path
from typing import Any

from conformbench.cli import _list_catalogue as catalogue
from conformbench.registry import installed_entry_points

__all__ = ["CATALOGUE_PATH", "catalogue_engine_rows", "catalogue_source", "static_engine_rows", "static_groups"]

#: (table title, second column, [(name, about)]): one table of ``list KIND``
Group = tuple[str, str, list[tuple[str, str]]]
#: the columns of an engine's row, in order
ENGINE_COLUMNS = ("engine", "status", "version", "note")
CATALOGUE_PATH = Path(__file__).with_name("_list_catalogue.py")


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


def _version(distributions: tuple[str, ...]) -> str | None:
    for name in distributions:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def static_engine_rows() -> list[dict[str, str]] | None:
    """``cli.engines.engine_statuses()``'s rows, from the catalogue's facts
    of each engine (None: ask the registry)."""
    return None if _live_only("engines") else catalogue_engine_rows()


def catalogue_engine_rows() -> list[dict[str, str]]:
    """Each engine's status, looked up from the catalogue's facts of it."""
    rows = []
    for name, (module, distributions, missing_note) in catalogue.ENGINES.items():
        missing = missing_note if importlib.util.find_spec(module) is None else None
        rows.append({"engine": name, "status": "installed" if missing is None else "unavailable",
                     "version": _version(distributions) or "-", "note": missing or ""})
    rows.extend(dict(zip(ENGINE_COLUMNS, row, strict=True)) for row in catalogue.EXTRA_ENGINE_ROWS)
    return rows


# -- making the catalogue from the live registries ----------------------------


def _sources() -> dict[str, tuple[tuple[str, str, tuple[str, ...]], ...]]:
    from conformbench.arms.base import arms
    from conformbench.backends.base import backends
    from conformbench.engines.base import engines
    from conformbench.formats.base import output_formats, schema_formats
    from conformbench.registry import Registry
    from conformbench.scoring.sections import run_sections, sections
    from conformbench.tasks.base import tasks

    def of(module: str, *registries: Registry[Any]) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
        return tuple((module, r.group, tuple(r.names())) for r in registries)

    return {"tasks": of("conformbench.tasks.base", tasks), "arms": of("conformbench.arms.base", arms),
            "backends": of("conformbench.backends.base", backends),
            "engines": of("conformbench.engines.base", engines),
            "formats": of("conformbench.formats.base", schema_formats, output_formats),
            "sections": of("conformbench.scoring.sections", sections, run_sections)}


def _engine_facts() -> dict[str, tuple[str, tuple[str, ...], str]]:
    from conformbench.engines.base import Engine, engines

    facts = {}
    for name in engines.names():
        cls = engines.get(name)
        own = [m for m in ("availability", "version") if getattr(cls, m) is not getattr(Engine, m)]
        if own:  # its status is its own code's: the catalogue could not say it
            raise RuntimeError(f"engine {name!r} overrides {', '.join(own)}: declare its status with `module`, "
                               "`distribution`, `version_distributions` and `install_hint` instead")
        facts[name] = (cls.module, cls.version_distributions or (cls.distribution,), cls.missing_note())
    return facts


def catalogue_source() -> str:
    """The text of ``cli/_list_catalogue.py``, made from the registries."""
    from conformbench.cli.engines import engine_statuses
    from conformbench.cli.list import live_groups
    from conformbench.engines.base import engines

    tables = {kind: tuple((title, second, tuple(rows)) for title, second, rows in live_groups(kind))
              for kind in ("tasks", "arms", "backends", "formats", "sections")}
    extra = tuple(tuple(row[c] for c in ENGINE_COLUMNS) for row in engine_statuses()
                  if row["engine"] not in engines.names())

    def value(obj: object) -> str:
        return pprint.pformat(obj, width=112, sort_dicts=False)

    return "\n".join([
        '"""What ``conformbench list KIND`` prints of the built-in plugins, read',
        "instead of the registries (cli/_list_static.py). Generated: do not edit;",
        'write it again with ``python -m conformbench.cli._list_static``."""',
        "",
        "from __future__ import annotations",
        "",
        "#: kind -> (registry module, entry-point group, built-in names) of each registry it lists",
        f"SOURCES: dict[str, tuple[tuple[str, str, tuple[str, ...]], ...]] = {value(_sources())}",
        "",
        "#: kind -> (table title, second column, ((name, about), ...)) of each table it prints",
        f"TABLES: dict[str, tuple[tuple[str, str, tuple[tuple[str, str], ...]], ...]] = {value(tables)}",
        "",
        "#: engine -> (its module, the distributions its version is read from, what it says when missing)",
        f"ENGINES: dict[str, tuple[str, tuple[str, ...], str]] = {value(_engine_facts())}",
        "",
        "#: the rows of `list engines` that are no registered engine (engine, status, version, note)",
        f"EXTRA_ENGINE_ROWS: tuple[tuple[str, str, str, str], ...] = {value(extra)}",
        "",
    ])


if __name__ == "__main__":
    CATALOGUE_PATH.write_text(catalogue_source(), encoding="utf-8")
    print(f"wrote {CATALOGUE_PATH}")
