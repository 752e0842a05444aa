"""The ``conformbench`` command. Each sibling module is one command group or
command and exposes ``register(app)``; this module discovers them, so adding
a command is one new module. Commands stay thin: they parse options and call
one library function."""

from __future__ import annotations

import importlib
import pkgutil
import sys

import typer

from conformbench.errors import ConformbenchError

__all__ = ["app", "main"]

app = typer.Typer(
    name="conformbench",
    help="Measure how well language models honour constraints written as code.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _register_commands() -> None:
    import conformbench.cli as pkg

    for mod in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
        if mod.name in ("main", "common") or mod.name.startswith("_"):
            continue
        module = importlib.import_module(f"conformbench.cli.{mod.name}")
        module.register(app)


_register_commands()


def main(argv: list[str] | None = None) -> int:
    """Entry point: usage and setup errors are one line on stderr, exit 2."""
    try:
        # with standalone_mode=False click returns a typer.Exit's code instead of raising
        result = app(args=argv, standalone_mode=False)
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
