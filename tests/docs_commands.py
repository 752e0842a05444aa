"""The commands the docs show, checked against what parses them now (for
tests/test_docs_names.py):

- ``conformbench <command> ... --flag``: the command path must exist and each
  flag must be one that command takes, read from the click command typer
  builds (``conformbench engines cost --concurrency`` is ``cost``'s flag, not
  ``engines``'s);
- ``python benchmarks/X.py --flag``: X.py must exist and declare the flag
  (``add_argument``), itself or in a ``benchmarks/_*.py`` module it imports;
- a code span that is only flags (``--dialect guided_json``): each flag must
  be one of some conformbench command or benchmark script.

Shell lines come from shell fences and from code spans that start with the
command; a synopsis's ``[--flag VALUE]`` is read as the flag."""

from __future__ import annotations

import ast
import re
import shlex
from collections.abc import Iterator
from functools import cache
from typing import Any

from docs_markdown import PLACEHOLDER, ROOT, Code

#: fence info strings whose lines are shell commands ("": a bare fence)
SHELL = {"bash", "sh", "shell", "console", ""}
_SEPARATORS = {"|", "||", "&&", ";", "&"}
_WRAPPERS = {"time", "nohup", "env", "exec"}
_FLAG = re.compile(r"--?[A-Za-z][\w-]*")
_SCRIPT = re.compile(r"benchmarks/\w+\.py")


def command_lines(code: Code) -> Iterator[tuple[int, list[str]]]:
    """(line, words) for each ``conformbench ...`` or ``python
    benchmarks/X.py ...`` command in a shell block or a span; the words
    start at ``conformbench`` or the script (continuations joined, ``|``,
    ``&&``, ``;`` and ``&`` end a command, comments dropped)."""
    if code.lang is None:
        command = _command_words(_words(" ".join(code.text.split())))
        if command is not None:
            yield code.line, command
        return
    if code.lang not in SHELL:
        return
    lines = code.text.split("\n")
    i = 0
    while i < len(lines):
        first, parts = i, [lines[i]]
        while parts[-1].endswith("\\") and i + 1 < len(lines):
            parts[-1] = parts[-1][:-1]
            i += 1
            parts.append(lines[i])
        i += 1
        words = _words(" ".join(parts).strip().removeprefix("$ "))
        for cut in [0] + [j + 1 for j, w in enumerate(words) if w in _SEPARATORS]:
            command = _command_words(words[cut:])
            if command is not None:
                yield code.line + first, command


def _words(line: str) -> list[str]:
    try:
        lexer = shlex.shlex(line, posix=True)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        return list(lexer)
    except ValueError:  # a synopsis's unbalanced quote: plain words
        return line.split("#")[0].split()


def _command_words(words: list[str]) -> list[str] | None:
    i = 0
    while i < len(words) and (re.fullmatch(r"[A-Z_]+=\S*", words[i]) or words[i] in _WRAPPERS):
        i += 1
    if words[i : i + 2] in (["python", "-m"], ["python3", "-m"]) and words[i + 2 : i + 3] == ["conformbench"]:
        i += 2
    elif words[i : i + 1] in (["python"], ["python3"]) and i + 1 < len(words) and _SCRIPT.fullmatch(words[i + 1]):
        i += 1
    if i < len(words) and (words[i] == "conformbench" or _SCRIPT.fullmatch(words[i])):
        cut = next((j for j in range(i + 1, len(words)) if words[j] in _SEPARATORS), len(words))
        return words[i:cut]
    return None


def flags_in(words: list[str]) -> Iterator[str]:
    """The flags among ``words`` (``--out=DIR`` -> ``--out``, ``[--json]``
    -> ``--json``)."""
    for word in words:
        token = word.strip("[]{}()").split("=")[0]
        if _FLAG.fullmatch(token):
            yield token


# --- conformbench -----------------------------------------------------------------

def _options(command: Any) -> set[str]:
    found = {"--help", "-h"}
    for param in command.params:
        found.update(o for o in (*param.opts, *param.secondary_opts) if o.startswith("-"))
    return found


@cache
def cli_root() -> Any:
    """The click command ``conformbench`` runs, every command loaded."""
    import typer.main

    from conformbench.cli.main import app, load_commands

    load_commands([])
    return typer.main.get_command(app)


@cache
def every_cli_flag() -> frozenset[str]:
    """Each flag of any conformbench command."""
    found: set[str] = set()
    todo = [cli_root()]
    while todo:
        command = todo.pop()
        found |= _options(command)
        todo.extend(getattr(command, "commands", {}).values())
    return frozenset(found)


def cli_problem(words: list[str]) -> str | None:
    """Why ``conformbench WORDS`` would be refused for its command path or a
    flag, or None. A flag is checked against the command it follows; a word
    after a group names one of its commands (``<command>``, ``NAME``: any)."""
    command = cli_root()
    path = ["conformbench"]
    for word in words:
        flag = next(flags_in([word]), None)
        if flag is not None:
            if flag not in _options(command):
                return f"{' '.join(path)} takes no {flag}"
        elif hasattr(command, "commands"):
            if PLACEHOLDER.fullmatch(word) or re.fullmatch(r"<[^>]*>", word):
                return None
            sub = command.commands.get(word)
            if sub is None:
                return f"{' '.join(path)} has no command {word!r} (it has: {', '.join(sorted(command.commands))})"
            command = sub
            path.append(word)
    return None


# --- benchmark scripts -----------------------------------------------------------

@cache
def script_flags(script: str) -> frozenset[str]:
    """The flags ``benchmarks/X.py`` declares (``add_argument``), with
    those of the ``benchmarks/_*.py`` modules it imports (``_common``'s
    ``--quick``, ``--json``)."""
    tree = ast.parse((ROOT / script).read_text(encoding="utf-8"))
    found = {"--help", "-h"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
            found.update(a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str))
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("_"):
            helper = f"benchmarks/{node.module}.py"
            if (ROOT / helper).is_file() and helper != script:
                found |= script_flags(helper)
    return frozenset(f for f in found if f.startswith("-"))


@cache
def every_script_flag() -> frozenset[str]:
    """Each flag of any benchmark script."""
    return frozenset(f for p in sorted((ROOT / "benchmarks").glob("*.py"))
                     for f in script_flags(p.relative_to(ROOT).as_posix()))


def script_problem(words: list[str]) -> str | None:
    """Why ``python benchmarks/X.py WORDS`` would be refused, or None."""
    script = words[0]
    if not (ROOT / script).is_file():
        return f"no script {script}"
    unknown = [f for f in flags_in(words[1:]) if f not in script_flags(script)]
    return f"{script} takes no {', '.join(unknown)}" if unknown else None


def command_problem(words: list[str]) -> str | None:
    """Why the command ``words`` (from ``command_lines``) would be refused."""
    return cli_problem(words[1:]) if words[0] == "conformbench" else script_problem(words)


# --- flags alone -------------------------------------------------------------------

def flag_span(code: Code) -> str | None:
    """A code span's text when it starts with a flag (``--dialect
    guided_json``, ``--f32 --seeds 7 8 9``), else None."""
    text = " ".join(code.text.split())
    return text if code.lang is None and text and _FLAG.fullmatch(text.split()[0].split("=")[0]) else None


def unknown_flags(text: str) -> list[str]:
    """The flags of ``text`` no conformbench command or benchmark takes."""
    known = every_cli_flag() | every_script_flag()
    return [f for f in flags_in(_words(text)) if f not in known]
