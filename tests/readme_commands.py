"""Reading the commands a doc shows, and running one exactly as written
(for tests/test_readme_commands.py).

A command is a ``conformbench ...`` line of a ``bash`` fence (cut at its
comment and at ``&&``, ``;`` or ``|`` outside quotes, as the shell reads
it) or an inline code span that starts with ``conformbench ``. A span that
is a synopsis, not a command (an upper-case placeholder such as ``REPLAY``,
or ``a|b`` alternatives) is not run. In docs/*.md only fences marked
runnable run: a ``<!-- runnable -->`` comment on the line before the fence
(docs/run.md says so).

A command runs in a child ``bash -c`` in its own folder, with this
checkout's ``conformbench`` first on PATH and only the size knob added to
the environment: ``CONFORMBENCH_TEST_SIZE`` (runner/test_size.py), which
caps counts (items, samples, repeats, concurrency) and changes nothing
else."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from docs_markdown import ROOT, split_markdown

#: the size knob and the size every documented command runs at
SIZE_ENV, SIZE = "CONFORMBENCH_TEST_SIZE", "1"
#: the marker of a runnable fence in docs/*.md
RUNNABLE = "<!-- runnable -->"
_PLACEHOLDER = re.compile(r"(?<![\w./-])[A-Z][A-Z_]{2,}(?![\w./-])")


@dataclass(frozen=True)
class DocCommand:
    doc: str
    line: int
    text: str

    def __str__(self) -> str:
        return f"{self.doc}:{self.line}: {self.text}"


def shell_commands(line: str) -> list[str]:
    """The commands of one shell line: cut at a comment, split at ``&&``,
    ``||``, ``;`` and ``|`` outside quotes; each as written (quotes kept)."""
    parts, current, quote, i = [], [], "", 0
    while i < len(line):
        c = line[i]
        if quote:
            quote = "" if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1].isspace()):
            break
        elif c in ";|&":
            parts.append("".join(current))
            current = []
            i += 2 if line[i : i + 2] in ("&&", "||") else 1
            continue
        current.append(c)
        i += 1
    parts.append("".join(current))
    return [p.strip() for p in parts if p.strip()]


def is_synopsis(text: str) -> bool:
    """A span that shows a command's shape (``conformbench reproduce
    REPLAY``, ``list tasks|arms``), not a command to run."""
    words = text.split("#")[0]
    return bool(_PLACEHOLDER.search(words)) or "|" in words


def _joined(lines: list[str]) -> list[tuple[int, str]]:
    """Shell lines with their continuations (a trailing ``\\``) joined, each
    with the offset of its first line."""
    out: list[tuple[int, str]] = []
    i = 0
    while i < len(lines):
        first, text = i, lines[i]
        while text.endswith("\\") and i + 1 < len(lines):
            i += 1
            text = text[:-1].rstrip() + " " + lines[i].strip()
        out.append((first, text))
        i += 1
    return out


def doc_commands(path: Path, runnable_only: bool) -> list[DocCommand]:
    """Every ``conformbench`` command of ``path``, in the doc's order, each
    once; ``runnable_only``: only those of fences marked runnable."""
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    codes, _ = split_markdown(text)
    found: dict[str, DocCommand] = {}
    for code in sorted(codes, key=lambda c: c.line):
        if code.lang is None:
            span = " ".join(code.text.split())
            if not runnable_only and span.startswith("conformbench ") and not is_synopsis(span):
                found.setdefault(span, DocCommand(path.name, code.line, span))
            continue
        if code.lang not in ("bash", "sh", "shell"):
            continue
        if runnable_only and (code.line < 3 or lines[code.line - 3].strip() != RUNNABLE):
            continue
        for offset, line in _joined(code.text.split("\n")):
            for command in shell_commands(line):
                if command.startswith("conformbench"):
                    found.setdefault(command, DocCommand(path.name, code.line + offset, command))
    return list(found.values())


def bin_folder(root: Path) -> Path:
    """A folder holding ``conformbench``: this checkout's CLI under this
    interpreter (whatever else is installed)."""
    folder = root / "bin"
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "conformbench"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m conformbench.cli.main "$@"\n', encoding="utf-8")
    script.chmod(0o755)
    return folder


def _env(bin_dir: Path) -> dict[str, str]:
    """The environment a command runs in: this one, the size knob, this checkout first."""
    return {**os.environ, SIZE_ENV: SIZE, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
            "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), *filter(None, [os.environ.get("PYTHONPATH")])])}


def run_as_written(command: str, cwd: Path, bin_dir: Path, timeout: float = 1700) -> subprocess.CompletedProcess[str]:
    """``command`` through bash in ``cwd``, with only the size knob added."""
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=_env(bin_dir), capture_output=True, text=True,
                          timeout=timeout, check=False, stdin=subprocess.DEVNULL)


@contextmanager
def running_as_written(command: str, cwd: Path, bin_dir: Path) -> Iterator[subprocess.Popen[bytes]]:
    """``command`` started as ``run_as_written`` runs it, in the background
    (a README line ending in ``&``), in a process group of its own, as a
    terminal's job is; its output goes to ``cwd/out.txt`` and
    ``cwd/err.txt``. Whatever is left of it is killed on the way out."""
    with (cwd / "out.txt").open("wb") as out, (cwd / "err.txt").open("wb") as err:
        proc = subprocess.Popen(["bash", "-c", command], cwd=cwd, env=_env(bin_dir), stdout=out, stderr=err,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)


def kill_job(proc: subprocess.Popen[bytes], cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Stop a command ``running_as_written`` as the shell's ``kill %1`` stops
    a background job (SIGTERM to its process group) and wait for it: its
    exit code and output."""
    os.killpg(proc.pid, signal.SIGTERM)
    code = proc.wait(timeout=timeout)
    read = {name: (cwd / f"{name}.txt").read_text(encoding="utf-8", errors="replace") for name in ("out", "err")}
    return subprocess.CompletedProcess(proc.args, code, read["out"], read["err"])


def shown(proc: subprocess.CompletedProcess[str]) -> str:
    """A finished command's exit code and the ends of its output, for a failure message."""
    return f"exit {proc.returncode}\n--- stdout\n{proc.stdout[-3000:]}\n--- stderr\n{proc.stderr[-3000:]}"


def link_examples(folder: Path) -> None:
    """``examples/`` in ``folder``, as in a clone (the README's paths are relative to it)."""
    (folder / "examples").symlink_to(ROOT / "examples", target_is_directory=True)
