"""The table of commands (cli/_commands.py) agrees with the command modules:
every module is one command's, each command's modules register it, its
summary is the one its own help gives, and the top-level help written from
the table is the help written with every command imported, byte for byte
(issue #58: the table is what lets ``--help`` import no command)."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
from typing import Any

import pytest
import typer
import typer.main

from conformbench.cli._commands import COMMANDS, command_named
from conformbench.cli.main import _command_modules, load_commands


def _built(modules: tuple[str, ...]) -> Any:
    """The click group of a fresh app holding only ``modules``' commands."""
    import importlib

    app = typer.Typer()

    @app.callback()
    def _root() -> None:
        pass

    for name in modules:
        importlib.import_module(f"conformbench.cli.{name}").register(app)
    return typer.main.get_command(app)


def test_every_command_module_is_in_the_table_once() -> None:
    listed = [m for entry in COMMANDS for m in entry.modules]
    assert len(listed) == len(set(listed)), listed
    missing = sorted(set(_command_modules()) - set(listed))
    assert not missing, f"add a line for {missing} to COMMANDS in src/conformbench/cli/_commands.py"
    assert sorted(listed) == _command_modules()
    assert len({entry.name for entry in COMMANDS}) == len(COMMANDS)


@pytest.mark.parametrize("entry", COMMANDS, ids=[c.name for c in COMMANDS])
def test_each_line_registers_its_command_with_its_summary(entry: Any) -> None:
    group = _built(entry.modules)
    assert list(group.commands) == [entry.name]
    command = group.commands[entry.name]
    shown = inspect.cleandoc(command.short_help or command.help or "").split("\n\n")[0].strip()
    assert " ".join(shown.split()) == entry.summary, entry.name


def test_a_name_not_in_the_table_is_none() -> None:
    assert command_named("validate") is not None
    assert command_named("lsit") is None and command_named(None) is None


def _help(code: str) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "TERMINAL_WIDTH")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env,
                          check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_help_from_the_table_is_the_help_of_every_command_imported() -> None:
    lazy = _help("import sys; from conformbench.cli.main import main; sys.exit(main(['--help']))")
    whole = _help("import sys; from conformbench.cli.main import load_commands, main; load_commands([]); "
                  "sys.exit(main(['--help']))")
    assert lazy == whole
    assert all(f" {entry.name} " in lazy for entry in COMMANDS)
    assert max(len(line) for line in lazy.splitlines()) == 160  # piped: 160 columns (issue #48)


def test_load_commands_registers_what_a_command_line_names() -> None:
    load_commands(["import", "inspect", "--help"])  # a group of four modules
    load_commands([])
    group = typer.main.get_command(__import__("conformbench.cli.main", fromlist=["app"]).app)
    assert {entry.name for entry in COMMANDS} <= set(group.commands)  # type: ignore[attr-defined]
