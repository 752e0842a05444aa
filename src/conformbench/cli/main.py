"""The ``conformbench`` command. Each sibling module is one command group or
command and exposes ``register(app)``, with one line in the table of
commands (``cli/_commands.py``); adding a command is one new module and that
line. Commands stay thin: they parse options and call one library function.

Command modules are imported on demand, to start in a fraction of a second
(issue #58): the modules of the command the command line's first word names
(``load_commands``), none for ``--help``, ``--version``, a bare
``conformbench`` or a mistyped name: the top-level help and did-you-mean
read the table (``LazyGroup``). A command asked for later is imported then.
Code that drives ``app`` itself calls ``load_commands([])`` first, which
registers them all.

Every error a user can cause, click's usage errors included, is one line on
stderr and exit 2."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from difflib import get_close_matches
from types import FrameType
from typing import Annotated, Any

import typer
from typer.core import TyperCommand, TyperGroup

from conformbench import stopping
from conformbench._version import __version__
from conformbench.cli._commands import COMMANDS, command_named
from conformbench.errors import ConformbenchError
from conformbench.jsontypes import is_number_error, number_error
from conformbench.records.markdown_escape import plain_text

__all__ = ["LazyGroup", "app", "load_commands", "main"]

PROG = "conformbench"


class LazyGroup(TyperGroup):
    """The top-level group: every command of the table (``COMMANDS``) is
    listed, and one not registered yet is imported when asked for (run,
    its own help); while the top-level help is written, such a command is
    a stand-in carrying the table's summary, so the listing imports none."""

    _listing = False
    _lean = False

    def list_commands(self, ctx: Any) -> list[str]:
        extra = [n for n in super().list_commands(ctx) if command_named(n) is None]
        return [c.name for c in COMMANDS] + extra

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        found = super().get_command(ctx, cmd_name)
        entry = command_named(cmd_name)
        if found is not None or entry is None:
            return found
        if self._listing:
            return TyperCommand(name=entry.name, help=entry.summary)
        _register(list(entry.modules))
        built: Any = typer.main.get_command(app)  # a group: the app has a callback
        command = built.commands.get(cmd_name)
        if command is not None:
            self.add_command(command, cmd_name)
        return command

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        name = args[0] if args else ""
        if name and not name.startswith("-") and self.get_command(ctx, name) is None:
            close = get_close_matches(name, self.list_commands(ctx))
            ctx.fail(f"No such command {name!r}." + (f" Did you mean {', '.join(map(repr, close))}?" if close else ""))
        return super().resolve_command(ctx, args)

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        own = set(args[: next((i for i, a in enumerate(args) if not a.startswith("-")), len(args))])
        # typer >= 0.29 reads even an absent flag's value through a pydantic adapter, so --help and
        # --version made every command line import pydantic; one that uses neither leaves them out
        self._lean = bool(args) and not own & {"--version", "-h", "--help"}
        return list(super().parse_args(ctx, args))

    def get_params(self, ctx: Any) -> list[Any]:
        params = list(super().get_params(ctx))
        return [p for p in params if p.name not in ("version", "help")] if self._lean else params

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


app = typer.Typer(
    name="conformbench",
    cls=LazyGroup,
    help="Measure how well language models honour constraints written as code.",
    no_args_is_help=True,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_enable=False,
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"{PROG} {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[bool, typer.Option(
        "--version", help="Print the version and exit.", is_eager=True, callback=_print_version)] = False,
) -> None:
    # a group even while one command is loaded (typer runs a lone command as the app)
    pass


def _paragraphs(text: str) -> str:
    """A docstring as whole paragraphs: typer's command list keeps a
    docstring's own line breaks, which split sentences mid-way."""
    paras = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(" ".join(line.strip() for line in para.splitlines()) for para in paras)


def _reflow(target: typer.Typer) -> None:
    for command in target.registered_commands:
        doc = command.callback.__doc__ if command.callback else None
        if command.help is None and doc:
            command.help = _paragraphs(doc)
    for group in target.registered_groups:
        if group.typer_instance is not None:
            _reflow(group.typer_instance)


def _hide_flag_types() -> None:
    """typer 0.29's rich help prints a value type after every flag (``--quiet
    <bool>``, ``--help <bool>``), though a flag takes no value: show none."""
    from typer import core

    option = getattr(core, "TyperOption", None)
    shown = getattr(option, "display_type_rich", None)
    if option is None or shown is None or getattr(shown, "flags_hidden", False):
        return

    def display_type_rich(self: Any, ctx: Any) -> Any:
        return None if getattr(self, "is_flag", False) else shown(self, ctx)

    display_type_rich.flags_hidden = True  # type: ignore[attr-defined]
    setattr(option, "display_type_rich", display_type_rich)  # noqa: B010 - a method, not a field


_loaded: set[str] = set()


def _command_modules() -> list[str]:
    import conformbench.cli as pkg

    return sorted(m.name for m in pkgutil.iter_modules(pkg.__path__)
                  if m.name not in ("main", "common") and not m.name.startswith("_"))


def _register(modules: list[str]) -> None:
    for name in modules:
        if name not in _loaded:
            importlib.import_module(f"conformbench.cli.{name}").register(app)
            _loaded.add(name)
    _reflow(app)


def load_commands(argv: list[str]) -> None:
    """Register the commands ``argv`` needs: those of the command its first
    word names, none when it names none (help, ``--version``, a mistyped
    name), every command when ``argv`` is empty."""
    if not argv:
        _register(_command_modules())
    else:
        _load_for(argv)


def _load_for(argv: list[str]) -> None:
    """Register the command ``argv``'s first word names, if any."""
    first = next((a for a in argv if not a.startswith("-")), None)
    entry = command_named(first)
    if entry is not None:
        _register(list(entry.modules))


def _on_signal(signum: int, frame: FrameType | None) -> None:
    stopping.note(signum)
    raise stopping.stop_exception(signum)


def _quiet_about_stops(hook: Any) -> Any:
    """An unraisable-exception hook over ``hook``: a stop raised while a
    finalizer ran is swallowed by Python, which prints an "Exception ignored"
    traceback and goes on (seen in CI: a demo stopped at 4 s ran to its end).
    Said nothing of here: the stop is noted, and the next
    ``stopping.checkpoint()`` raises it where it propagates."""

    def on_unraisable(unraisable: Any) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt) and stopping.first_signal() is not None:
            return
        hook(unraisable)

    return on_unraisable


@contextmanager
def _signals_stop() -> Iterator[None]:
    """SIGTERM raises ``Terminated`` and Ctrl-C ``KeyboardInterrupt`` while
    a command runs, each noted in ``stopping`` (main thread only; the
    previous handlers are put back after)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, _on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    previous_hook = sys.unraisablehook
    sys.unraisablehook = _quiet_about_stops(previous_hook)
    try:
        yield
    finally:
        sys.unraisablehook = previous_hook
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def main(argv: list[str] | None = None) -> int:
    """Entry point: usage and setup errors are one line on stderr, exit 2."""
    stopping.clear()
    with _signals_stop():
        code = _main(argv)
    stopped = stopping.first_signal()
    if stopped is not None:
        # what is in the replay stays; a run started again with the same command skips it
        how = "stopped by SIGTERM" if stopped == signal.SIGTERM else "interrupted"
        print(f"conformbench: {how}; rerun the same command to resume (what is written is kept)", file=sys.stderr)
        return 143 if stopped == signal.SIGTERM else 130
    return code


#: help's width when stdout is no terminal and COLUMNS is unset: wide enough
#: that no name or path in a help text is cut by an ellipsis (issue #48)
PIPED_HELP_WIDTH = 160


def _wide_piped_help() -> None:
    """typer lays rich help out in 80 columns when piped, cutting names in its
    tables (``reason_then_constrai…``): give it a wide page instead."""
    import os

    if sys.stdout.isatty() or os.environ.get("COLUMNS") or os.environ.get("TERMINAL_WIDTH"):
        return
    from typer import rich_utils

    if getattr(rich_utils, "MAX_WIDTH", 0) is None:
        rich_utils.MAX_WIDTH = PIPED_HELP_WIDTH


def _widen_help_when_written() -> None:
    """``_wide_piped_help`` just before any help is written, not at start:
    it imports typer's rich help (rich's tables, markdown, tracebacks), a
    tenth of a second that a command which writes no help does not pay."""
    for cls in (TyperCommand, TyperGroup):
        method = cls.__dict__["format_help"]
        if getattr(method, "widens", False):
            continue

        def format_help(self: Any, ctx: Any, formatter: Any, _method: Any = method) -> None:
            _wide_piped_help()
            _method(self, ctx, formatter)

        format_help.widens = True  # type: ignore[attr-defined]
        setattr(cls, "format_help", format_help)  # noqa: B010 - a method, not a field


def _main(argv: list[str] | None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args == ["--version"]:  # said before typer builds a command (see LazyGroup.parse_args)
        print(f"{PROG} {__version__}")
        return 0
    _hide_flag_types()
    _widen_help_when_written()
    try:
        _load_for(args)
        # with standalone_mode=False click returns a typer.Exit's code instead of raising
        result = app(args=args, prog_name=PROG, standalone_mode=False)
        if isinstance(result, int) and not isinstance(result, bool):
            return result
    except ConformbenchError as exc:
        _error(str(exc))
        return exc.exit_code
    except typer.Exit as exc:
        return int(exc.exit_code or 0)
    except KeyboardInterrupt:  # said by main (typer returns most of them as exit code 130)
        return 130
    except OSError as exc:
        # a full disk, a read-only folder: exit 1 would read as "gate tripped" to CI
        where = f" {exc.filename}" if exc.filename else ""
        _error(f"cannot use{where}: {exc.strerror or exc}")
        return 2
    except RecursionError:  # the backstop: every reader bounds its nesting before this
        _error("the input is nested too deeply to read (a structure or a table deeper than any reader takes)")
        return 2
    except ValueError as exc:
        if not is_number_error(exc):  # the backstop of the readers' own checks
            raise
        _error(f"cannot read the input: {number_error(exc)}")
        return 2
    except Exception as exc:  # click usage errors
        import click

        # typer >= 0.16 raises the exceptions of its own vendored click
        vendored = sys.modules.get("typer._click.exceptions")
        usage = (click.exceptions.ClickException, getattr(vendored, "ClickException", ()))
        abort = (click.exceptions.Abort, getattr(vendored, "Abort", ()))
        if isinstance(exc, usage):
            if not exc.format_message().strip():  # bare `conformbench`: the help is the whole answer
                return 2
            _error(_usage_line(exc))
            return 2
        if isinstance(exc, abort):
            return 130
        raise
    return 0


def _error(message: str) -> None:
    # a message can quote a server's or a file's words: no control character reaches the terminal raw
    one_line = plain_text(" ".join(message.splitlines()))
    print(f"{PROG}: error: {one_line}", file=sys.stderr)


def _usage_line(exc: Any) -> str:
    """Click's usage error (unknown option, bad value...) as one line, with
    where to look: click prints usage, a hint and the error on three."""
    ctx = getattr(exc, "ctx", None)
    where = f" (see: {ctx.command_path} --help)" if ctx is not None else ""
    return f"{exc.format_message()}{where}"


if __name__ == "__main__":
    sys.exit(main())
