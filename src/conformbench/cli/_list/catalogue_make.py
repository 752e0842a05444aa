"""Makes ``cli/_list/catalogue.py``, the table ``conformbench list`` reads
instead of the registries (cli/_list/static.py), from the live registries:
``python -m conformbench.cli._list.catalogue_make`` writes it, and
tests/cli/test_list_catalogue.py fails while the file differs from what
``catalogue_source`` makes."""

from __future__ import annotations

import pprint
from pathlib import Path
from typing import Any

from conformbench.cli._list.static import ENGINE_COLUMNS

__all__ = ["CATALOGUE_PATH", "catalogue_source"]

CATALOGUE_PATH = Path(__file__).with_name("catalogue.py")


def _sources() -> dict[str, tuple[tuple[str, str, tuple[str, ...]], ...]]:
    from conformbench.arms.base import arms
    from conformbench.backends.base import backends
    from conformbench.engines.base import engines
    from conformbench.formats.base import output_formats, schema_formats
    from conformbench.registry import Registry
    from conformbench.scoring.sections import run_sections, sections
    from conformbench.tasks.base import tasks

    def of(module: str, *registries: Registry[Any]) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
        for r in registries:
            if r.names() != sorted(r.builtins):  # the table is of conformbench's own plugins alone
                extra = ", ".join(sorted(set(r.names()) - set(r.builtins)))
                raise RuntimeError(f"the {r.kind} registry holds more than its built-ins ({extra}): write the "
                                   "catalogue in a fresh interpreter with no plugin installed")
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
    """The text of ``cli/_list/catalogue.py``, made from the registries."""
    from conformbench.cli.engines import engine_statuses
    from conformbench.cli.list import live_groups
    from conformbench.engines.base import engines

    sources = _sources()  # first: it refuses a registry holding more than its built-ins
    tables = {kind: tuple((title, second, tuple(rows)) for title, second, rows in live_groups(kind))
              for kind in ("tasks", "arms", "backends", "formats", "sections")}
    extra = tuple(tuple(row[c] for c in ENGINE_COLUMNS) for row in engine_statuses()
                  if row["engine"] not in engines.names())

    def value(obj: object) -> str:
        return pprint.pformat(obj, width=112, sort_dicts=False)

    return "\n".join([
        '"""What ``conformbench list KIND`` prints of the built-in plugins, read',
        "instead of the registries (cli/_list/static.py). Generated: do not edit;",
        'write it again with ``python -m conformbench.cli._list.catalogue_make``."""',
        "",
        "from __future__ import annotations",
        "",
        "#: kind -> (registry module, entry-point group, built-in names) of each registry it lists",
        f"SOURCES: dict[str, tuple[tuple[str, str, tuple[str, ...]], ...]] = {value(sources)}",
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
