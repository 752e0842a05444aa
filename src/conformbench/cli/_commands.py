"""The table of ``conformbench``'s commands: each top-level name, the
command modules that register it, and the one line ``conformbench --help``
lists for it. The top-level help and a mistyped name's did-you-mean are
read from here, so neither imports a command module (each imports its
library: all of them took seconds to start); a command's own modules are
imported when it runs or its own help is asked for.

A new command is a new module in ``conformbench.cli`` (with
``register(app)``) and one line here; tests/cli/test_commands_table.py
fails, naming the module, until both agree (the line's summary must be the
one the command's own help gives)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["COMMANDS", "CommandEntry", "command_named"]


@dataclass(frozen=True)
class CommandEntry:
    """A top-level command: its ``name`` on the command line, the modules
    of ``conformbench.cli`` whose ``register`` adds it (and its
    sub-commands), and the ``summary`` the top-level help shows."""

    name: str
    modules: tuple[str, ...]
    summary: str


#: in the order ``conformbench --help`` lists them (typer's: commands, then groups)
COMMANDS: tuple[CommandEntry, ...] = (
    CommandEntry("demo", ("demo",), "Rescore the shipped full-size replays (generated live with the embedded "
                 "SmolLM2-135M) into report.md/html/json, one folder per replay."),
    CommandEntry("list", ("list",), "List the registered tasks, arms, backends, engines, formats or report sections "
                 "(plugins included), one line each, or the models --model takes by name (with their sizes). For "
                 "engines: installed (with version) or why not."),
    CommandEntry("render", ("render",), "Print the schema rendered in one schema format."),
    CommandEntry("reproduce", ("reproduce",), "Rerun REPLAY's spec (models, tasks, decoding, threads) on this machine "
                 "and print the share of identical texts, the verdicts that flipped, and each headline metric's shift "
                 "with its paired interval. Greedy texts are identical only on the same llama.cpp build, CPU features "
                 "and threads; the replay headers' build facts say which of those differ. A replay is data: the "
                 "server, the key's variable, a model file and a dataset are the command line's, never the replay's "
                 "(shown when they differ); a replay that needs one and is not given it is refused in one line."),
    CommandEntry("run", ("run",), "Run models x tasks x arms x engines x formats x shots live, appending every "
                 "generation to OUT/replay.jsonl (a rerun resumes), then write the reports. The constraint canary "
                 "runs first; a failure exits 2."),
    CommandEntry("score", ("score",), "Rescore replay files alone (no model needed) and write report.json, "
                 "report.md, report.html, ledger.csv and quadrants.svg."),
    CommandEntry("serve", ("serve",), "Serve a model on 127.0.0.1 (default http://127.0.0.1:8000/v1) with the settings "
                 "`engines cost`, `engines probe` and `run --backend openai` are tested against (llama-cpp-python: "
                 "--interrupt_requests False, so concurrent streams wait instead of being cut). Runs until Ctrl-C."),
    CommandEntry("validate", ("validate",), "Validate instance files against a schema; exit 1 if any is invalid."),
    CommandEntry("dataset", ("dataset",), "Build and inspect schema datasets (ConCodeEval's 602 schemas, or your "
                 "own)."),
    CommandEntry("engines", ("engines",), "Constraint engines: which are installed, and which JSON Schema keywords "
                 "each enforces."),
    CommandEntry("export", ("export",), "Write scored replays in another tool's format."),
    CommandEntry("import", ("imports",),
                 "Read another tool's replay into a conformbench replay (score it with `score`)."),
)


def command_named(name: str | None) -> CommandEntry | None:
    """The entry of the top-level command ``name`` (None: no such command)."""
    return next((c for c in COMMANDS if c.name == name), None)
