"""``conformbench list KIND``: the names a registry holds now (built-in and
plugins), each with one line saying what it is."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from conformbench.cli._list.static import ENGINE_COLUMNS, static_engine_rows, static_groups
from conformbench.cli.common import join_names, print_json
from conformbench.errors import UsageError
from conformbench.registry import Registry, did_you_mean
from conformbench.runner.progress import console as wide_console

if TYPE_CHECKING:
    from conformbench.arms import Arm
    from conformbench.backends.manifest import BackendManifest
    from conformbench.formats.base import OutputFormat, SchemaFormat
    from conformbench.scoring.sections import RunSection, Section

__all__ = ["live_groups", "register"]


def _first_sentence(text: str | None) -> str:
    para = " ".join((text or "").strip().split("\n\n")[0].split()).replace("``", "")
    end = para.find(". ")
    return para if end < 0 else para[: end + 1]


def _summary(obj: Any) -> str:
    """What a registered object is, where it declares nothing to say it:
    the first sentence of its class's docstring, else of its module's."""
    if isinstance(obj, type) and obj.__doc__:
        return _first_sentence(obj.__doc__)
    module = sys.modules.get(getattr(obj, "__module__", ""), None)
    return _first_sentence(getattr(module, "__doc__", None))


def _arm_summary(arm: Arm) -> str:
    """An arm's declared ``description``, else its docstrings'."""
    return arm.description or _summary(arm)


def _title(section: type[Section[Any]] | type[RunSection[Any]]) -> str:
    """A report section's declared ``title``."""
    return section.title


def _rows(registry: Registry[Any], describe: Callable[[Any], str] = _summary) -> list[tuple[str, str]]:
    return [(name, describe(registry.get(name))) for name in registry.names()]


def _backend_rows() -> list[tuple[str, str]]:
    """Each backend with what it is and what its manifest declares."""
    from conformbench.backends.base import backends, manifest_of

    return [(name, f"{_summary(backends.get(name))} {_declared(manifest_of(name))}") for name in backends.names()]


def _task_rows() -> list[tuple[str, str]]:
    """Each task with what it measures and the options and axes it declares."""
    from conformbench.tasks.base import tasks
    from conformbench.tasks.grid import option_fields

    rows = []
    for name in tasks.names():
        task = tasks.get(name)
        options = [f"--{o.replace('_', '-')}" for o in option_fields(task.options_model)]
        parts = [*([f"options: {', '.join(options)}"] if options else []),
                 *([f"axes: {', '.join(a.name for a in task.axes)}"] if task.axes else [])]
        rows.append((name, _summary(task) + (f" ({'; '.join(parts)})" if parts else "")))
    return rows


def _declared(manifest: BackendManifest) -> str:
    """'(constraints: local; options: --batched; can: beams, attention)'."""
    can = [word for word, has in (("beams", manifest.beams), ("attention", manifest.attention)) if has]
    parts = [f"constraints: {manifest.constraint_side}",
             *([f"options: {', '.join(o.cli_flag for o in manifest.options)}"] if manifest.options else []),
             *([f"can: {', '.join(can)}"] if can else [])]
    return f"({'; '.join(parts)})"


def _display_name(obj: type[SchemaFormat] | type[OutputFormat]) -> str:
    return obj.display_name


def _sections() -> list[tuple[str, str, list[tuple[str, str]]]]:
    from conformbench.scoring.sections import run_sections, sections

    return [("report sections (per task)", "title", _rows(sections, _title)),
            ("run report sections (across tasks and models)", "title", _rows(run_sections, _title))]


def _formats() -> list[tuple[str, str, list[tuple[str, str]]]]:
    from conformbench.formats.base import output_formats, schema_formats

    return [("schema formats", "display name", _rows(schema_formats, _display_name)),
            ("output formats", "display name", _rows(output_formats, _display_name))]


def _arms() -> list[tuple[str, str, list[tuple[str, str]]]]:
    from conformbench.arms.base import arms

    return [("arms", "what it does", _rows(arms, _arm_summary))]


#: KIND -> its [(table title, second column, rows)], each imported only when that kind is listed
_TABLES: dict[str, Callable[[], list[tuple[str, str, list[tuple[str, str]]]]]] = {
    "tasks": lambda: [("tasks", "what it measures (and declares)", _task_rows())],
    "arms": _arms,
    "backends": lambda: [("backends", "what it drives (and declares)", _backend_rows())],
    "formats": _formats,
    "sections": _sections,
}


KINDS = ("tasks", "arms", "backends", "engines", "formats", "sections", "models")


def live_groups(kind: str) -> list[tuple[str, str, list[tuple[str, str]]]]:
    """The tables of ``list KIND``, from the registries (each imports its plugins)."""
    return _TABLES[kind]()


def _engines(as_json: bool) -> None:
    """Every engine's status, as ``engines list`` shows it."""
    rows = static_engine_rows()
    if rows is None:
        from conformbench.cli.engines import engine_statuses

        rows = engine_statuses()
    if as_json:
        print_json({"engines": rows})
        return
    table = Table(*ENGINE_COLUMNS)
    for row in rows:
        table.add_row(*(escape(value) for value in row.values()))
    wide_console().print(table)


def _models(as_json: bool) -> None:
    from conformbench.backends.locate import model_catalogue

    rows = model_catalogue()
    if as_json:
        print_json({"models": [{"name": m.aliases[0], "aliases": list(m.aliases[1:]), "about": m.about,
                                "status": m.status, "size_bytes": m.size_bytes,
                                "path": None if m.path is None else str(m.path)} for m in rows]})
        return
    table = Table("name", "size", "status", "what it is", title="models (--model NAME; or a GGUF file path; "
                  "with --backend openai, the served model's name)", title_justify="left")
    for m in rows:
        size = "-" if m.size_bytes is None else f"{m.size_bytes / 1e6:.0f} MB"
        name = m.aliases[0] + (f" ({', '.join(m.aliases[1:])})" if m.aliases[1:] else "")
        table.add_row(escape(name), size, escape(m.status), escape(m.about))
    console = wide_console()
    console.print(table)
    for m in rows:  # a line each, whole (a path in a column would be cut or wrapped): what a server's --model takes
        if m.path is not None:
            console.print(escape(f"{m.aliases[0]}: {m.path}"), soft_wrap=True, highlight=False)


def list_names(
    kind: Annotated[str, typer.Argument(metavar="KIND", help=f"What to list: {join_names(KINDS)}.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the names as JSON.")] = False,
) -> None:
    """List the registered tasks, arms, backends, engines, formats or report sections (plugins
    included), one line each, or the models --model takes by name (with their sizes). For engines:
    installed (with version) or why not."""
    if kind not in KINDS:
        raise UsageError(f"cannot list {kind!r}{did_you_mean(kind, list(KINDS))}; "
                         f"known: {', '.join(KINDS)}")
    if kind == "models":
        _models(as_json)
        return
    if kind == "engines":
        _engines(as_json)
        return
    # the built-ins' rows from the catalogue: a registry imports every plugin to describe it
    groups = static_groups(kind) or live_groups(kind)
    if as_json:
        print_json({title: [{"name": n, "about": about} for n, about in rows] for title, _, rows in groups})
        return
    console = wide_console()
    for title, second, rows in groups:
        table = Table("name", second, title=title, title_justify="left")
        for name, about in rows:
            table.add_row(name, escape(about))
        console.print(table)


def register(app: typer.Typer) -> None:
    app.command("list")(list_names)
