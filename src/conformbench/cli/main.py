"""The ``conformbench`` command. Each sibling module is one command group or
command and exposes ``register(app)``; this module discovers them, so adding
a command is one new module. Commands stay thin: they parse options and call
one library function.

Command modules are imported on demand (``load_commands``): a module named
like the command line's first word alone, every module otherwise (help, a
mistyped name: did-you-mean needs them all). Each module imports its library,
and importing them all cost ``conformbench score`` about 0.1 s of a 1 s run.
Code that drives ``app`` itself calls ``load_commands([])`` first."""

from __future__ import annotations

import importlib
import pkgutil
import sys

import typer

from conformbench.errors import ConformbenchError

__all__ = ["app", "load_commands", "main"]

app = typer.Typer(
    name="conformbench",
    help="Measure how well language models honour constraints written as code.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)




@app.callback()
def _root() -> None:
    # a group even while one command is loaded (typer runs a lone command as the app)
    pass


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


def _command_names() -> set[str]:
    names = {c.name or (c.callback.__name__ if c.callback else "") for c in app.registered_commands}
    return names | {g.name or "" for g in app.registered_groups}


def load_commands(argv: list[str]) -> None:
    """Register the commands ``argv`` needs (see the module docstring)."""
    first = next((a for a in argv if not a.startswith("-")), None)
    modules = _command_modules()
    if first in modules:
        _register([first])
        if first in _command_names():
            return
    _register(modules)


def main(argv: list[str] | None = None) -> int:
    """Entry point: usage and setup errors are one line on stderr, exit 2."""
    args = sys.argv[1:] if argv is None else argv
    try:
        load_commands(args)
        # with standalone_mode=False click returns a typer.Exit's code instead of raising
        result = app(args=args, standalone_mode=False)
        if isinstance(result, int) and not isinstance(result, bool):
            return result
    except ConformbenchError as exc:
        print(f"conformbench: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except typer.Exit as exc:
        return int(exc.exit_code or 0)
    except KeyboardInterrupt:
        print("conformbench: interrupted; rerun the same command to resume", file=sys.stderr)
        return 130
    except Exception as exc:  # click usage errors
        import click

        # typer >= 0.16 raises the exceptions of its own vendored click
        vendored = sys.modules.get("typer._click.exceptions")
        usage = (click.exceptions.ClickException, getattr(vendored, "ClickException", ()))
        abort = (click.exceptions.Abort, getattr(vendored, "Abort", ()))
        if isinstance(exc, usage):
            exc.show()
            return 2
        if isinstance(exc, abort):
            return 130
        raise
    return 0


if __name__ == "__main__":
    sys.exit(main())
