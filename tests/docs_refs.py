"""What the markdown docs say about the code, read out and checked against
the code as it is now (for tests/test_docs_names.py):

- dotted names ``conformbench.x.y`` in code (spans and fenced blocks), a code
  span that is only a dotted name starting at a conformbench subpackage
  (``records.spec.ReplaySpec``), and a python block's ``from conformbench...
  import a, b``: imported, then looked up attribute by attribute;
- repository paths (``src/conformbench/...``, ``tests/...``,
  ``benchmarks/...``, ``examples/...``, ``docs/...``, ``.ci/...``) anywhere
  in a doc, ``conformbench/...`` paths, and relative links: each must exist;
- a code span that is only a package path (``records/rounds.py``,
  ``backends/openai/``) or any ``*.py`` path: under src/conformbench, src,
  tests, benchmarks or the root; a bare file name (``validation.py``):
  somewhere in src, tests, benchmarks or examples;
- a test named in a span (```test_x```) or as ``tests/a.py::test_x``: a
  test function of that name in tests/ (in that file);
- ```NAME` in `x.py```, ```x.py`'s `NAME```, ```NAME` (`x.py`)``: the
  name must occur in that file;
- commands and flags: docs_commands.py.

``references`` lists a doc's references, ``problem`` says why one names
nothing that exists now."""

from __future__ import annotations

import ast
import importlib
import re
import shlex
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

from docs_commands import command_lines, command_problem, flag_span, unknown_flags
from docs_markdown import PACKAGE, PLACEHOLDER, ROOT, Code, Ref, split_markdown

# --- dotted names -------------------------------------------------------------

# not inside a string ("conformbench.replay") or a format id (conformbench.report/1)
_DOTTED = re.compile(r"(?<![\w.\-/\"'])conformbench(?:\.[A-Za-z_]\w*)+(?![\w/\-\"'])")
_BARE_DOTTED = re.compile(r"([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?:\(.*\))?")
#: a span like `report.json` names a file, not an attribute
_FILE_SUFFIXES = {"json", "jsonl", "md", "html", "csv", "svg", "py", "toml", "yaml", "yml", "xml", "txt", "gguf"}


@cache
def subpackages() -> frozenset[str]:
    """conformbench's subpackages (``records``, ``arms``...). A span like
    ``registry.get(name)`` starts with a module's name too, but means any
    registry: only a subpackage's name is read as the start of a path."""
    return frozenset(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists())


def dotted_names(code: Code) -> Iterator[tuple[int, str]]:
    """(line, ``conformbench.x.y``) for each name ``code`` refers to."""
    for m in _DOTTED.finditer(code.text):
        yield code.line_at(m.start()), m.group(0)
    bare = _BARE_DOTTED.fullmatch(code.text.strip()) if code.lang is None else None
    if bare is not None:
        parts = bare.group(1).split(".")
        if parts[0] in subpackages() and parts[-1] not in _FILE_SUFFIXES:
            yield code.line, "conformbench." + bare.group(1)
    if code.lang == "python":
        yield from _python_imports(code)


def _python_imports(code: Code) -> Iterator[tuple[int, str]]:
    try:
        tree = ast.parse(code.text)
    except SyntaxError:
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "conformbench":
            for alias in node.names:
                yield code.line + node.lineno - 1, f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "conformbench":
                    yield code.line + node.lineno - 1, alias.name


@cache
def entry_point_groups() -> frozenset[str]:
    """``conformbench.engines``...: every ``Registry("kind", ...)`` in the
    source names the entry-point group ``Registry.group`` derives from it."""
    groups = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Registry"
                    and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                groups.add("conformbench." + node.args[0].value.replace(" ", "_") + "s")
    return frozenset(groups)


@cache
def name_problem(dotted: str) -> str | None:
    """Why ``dotted`` names nothing, or None. Read two ways, and either
    will do: as Python imports it (the longest module prefix, then its
    attributes) and as attributes from the package down
    (``conformbench.tasks.create``: the package binds ``tasks`` to the
    registry, a name the module ``conformbench.tasks`` lacks)."""
    if dotted in entry_point_groups():
        return None
    parts = dotted.split(".")
    as_imported = _walk(parts, modules_first=True)
    if as_imported is None or _walk(parts, modules_first=False) is None:
        return None
    return as_imported


def _walk(parts: list[str], modules_first: bool) -> str | None:
    obj: Any = importlib.import_module(parts[0])
    for i in range(1, len(parts)):
        name = ".".join(parts[: i + 1])
        if modules_first or not hasattr(obj, parts[i]):
            try:
                obj = importlib.import_module(name)
                continue
            except ModuleNotFoundError as exc:
                if exc.name is not None and not exc.name.startswith(parts[0]):
                    return None  # an optional dependency missing here: the module is there
        if not hasattr(obj, parts[i]):
            return f"{'.'.join(parts[:i])} has no {parts[i]!r}"
        obj = getattr(obj, parts[i])
    return None


# --- paths --------------------------------------------------------------------

_ROOTED = re.compile(r"(?<![\w/.\-~])((?:src/conformbench|tests|benchmarks|examples|docs|\.ci)/[\w./*\-]*)")
_PACKAGE_PATH = re.compile(r"(?<![\w/.\-])conformbench/([\w./*\-]*(?:/|\.\w+))(?![\w/\-])")
_SPAN_PATH = re.compile(r"[\w\-]+(?:/[\w.\-]+)+/?")


def rooted_paths(text: str) -> Iterator[tuple[int, str]]:
    """(line offset, path) of each repository path in ``text``."""
    for m in _ROOTED.finditer(text):
        yield text.count("\n", 0, m.start()), m.group(1).rstrip(".:,")
    for m in _PACKAGE_PATH.finditer(text):
        yield text.count("\n", 0, m.start()), "src/conformbench/" + m.group(1).rstrip(".:,")


def span_path(code: Code) -> str | None:
    """The package path a code span holds whole (``records/rounds.py``,
    ``backends/openai/``), or None: one whose first folder is a
    conformbench package, or any ``.py`` file."""
    text = code.text.strip()
    if code.lang is not None or not _SPAN_PATH.fullmatch(text) or _ROOTED.match(text) or _PACKAGE_PATH.match(text):
        return None
    if text.split("/")[0] in subpackages() or text.endswith(".py"):
        return text
    return None


def path_exists(path: str, *bases: Path) -> bool:
    """Whether ``path`` is there under one of ``bases``; a ``*`` and an
    upper-case placeholder (``DIR``, ``BACKEND``) match any one name."""
    pattern = "/".join("*" if PLACEHOLDER.fullmatch(part) else part for part in path.strip("/").split("/"))
    return any((base / pattern).exists() if "*" not in pattern else any(base.glob(pattern)) for base in bases)


# --- file names and the names in a file -------------------------------------------

_FILE_NAME = re.compile(r"[\w\-]+\.py")
_IDENT = r"`([A-Za-z_]\w*)(?:\(\))?`"
_PY = r"`([\w./\-]+\.py)`"
_IN_FILE = [re.compile(_IDENT + r" (?:in|of|from) " + _PY), re.compile(_IDENT + r" \(" + _PY)]
_FILES_NAME = re.compile(_PY + r"'s " + _IDENT)
_SEARCHED = ("src", "tests", "benchmarks", "examples")


def names_in_files(text: str) -> Iterator[tuple[int, str]]:
    """(line offset, ``path::NAME``) for each name a doc places in a file."""
    found = [(m.start(), m.group(2), m.group(1)) for pattern in _IN_FILE for m in pattern.finditer(text)]
    found += [(m.start(), m.group(1), m.group(2)) for m in _FILES_NAME.finditer(text)]
    for start, path, name in sorted(found):
        yield text.count("\n", 0, start), f"{path}::{name}"


@cache
def _by_name() -> dict[str, list[Path]]:
    """file name -> the files of that name in src, tests, benchmarks, examples."""
    found: dict[str, list[Path]] = {}
    for top in _SEARCHED:
        for path in (ROOT / top).rglob("*.py"):
            found.setdefault(path.name, []).append(path)
    return found


def _files_for(path: str) -> list[Path]:
    if "/" not in path:
        return _by_name().get(path, [])
    bases = (ROOT, PACKAGE, ROOT / "src", ROOT / "tests", ROOT / "benchmarks")
    return [base / path for base in bases if (base / path).is_file()]


def name_in_file_problem(text: str) -> str | None:
    path, name = text.split("::")
    files = _files_for(path)
    if not files:
        return f"no file {path}"
    word = re.compile(rf"\b{re.escape(name)}\b")
    if any(word.search(f.read_text(encoding="utf-8")) for f in files):
        return None
    return f"{name} does not occur in {', '.join(f.relative_to(ROOT).as_posix() for f in files)}"


# --- tests named ---------------------------------------------------------------------

_TEST_SPAN = re.compile(r"(test_\w+)(?:\[.*\])?(?:\(\))?")
_TEST_ID = re.compile(r"(?<![\w/.\-])(tests/[\w/.\-]+\.py)::(test_\w+)")


@cache
def defined_tests() -> dict[str, frozenset[str]]:
    """tests/... file -> the test functions it defines."""
    return {path.relative_to(ROOT).as_posix(): frozenset(re.findall(r"^\s*(?:async\s+)?def (test_\w+)",
                                                                    path.read_text(encoding="utf-8"), re.M))
            for path in (ROOT / "tests").rglob("*.py")}


def named_test_problem(text: str) -> str | None:
    """Why the test ``name`` or ``tests/x.py::name`` is not defined, or None."""
    path, _, name = text.rpartition("::")
    if path:
        return None if name in defined_tests().get(path, ()) else f"{path} defines no {name}"
    return None if any(name in names for names in defined_tests().values()) else "no test of that name in tests/"


# --- the whole scan ------------------------------------------------------------------

_LINK = re.compile(r"(?<!!)\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def references(doc: Path) -> Iterator[Ref]:
    """Every reference to the code in the markdown file ``doc``."""
    name = doc.relative_to(ROOT).as_posix() if doc.is_relative_to(ROOT) else doc.name
    text = doc.read_text(encoding="utf-8")
    codes, prose = split_markdown(text)
    for offset, path in rooted_paths(text):
        yield Ref(name, offset + 1, "path", path)
    for offset, found in names_in_files(text):
        yield Ref(name, offset + 1, "name in file", found)
    for m in _TEST_ID.finditer(text):
        yield Ref(name, text.count("\n", 0, m.start()) + 1, "test", f"{m.group(1)}::{m.group(2)}")
    for code in codes:
        yield from _in_code(name, code)
    for m in _LINK.finditer(prose):
        target, _, anchor = m.group(1).partition("#")
        if re.match(r"[a-z][a-z+.-]*:", target):
            continue
        resolved = (doc.parent / target).resolve() if target else doc
        shown = (resolved.relative_to(ROOT) if resolved.is_relative_to(ROOT) else resolved).as_posix()
        line = prose.count("\n", 0, m.start()) + 1
        if target:
            yield Ref(name, line, "link", shown)
        if anchor and resolved.suffix == ".md":
            yield Ref(name, line, "anchor", f"{shown}#{anchor}")


def _in_code(doc: str, code: Code) -> Iterator[Ref]:
    for line, dotted in dotted_names(code):
        yield Ref(doc, line, "name", dotted)
    found = span_path(code)
    if found is not None:
        yield Ref(doc, code.line, "package path", found)
    elif code.lang is None and _FILE_NAME.fullmatch(code.text.strip()):
        yield Ref(doc, code.line, "file name", code.text.strip())
    for line, words in command_lines(code):
        yield Ref(doc, line, "command", shlex.join(words))
    test = _TEST_SPAN.fullmatch(code.text.strip()) if code.lang is None else None
    if test is not None:
        yield Ref(doc, code.line, "test", test.group(1))
    flags = flag_span(code)
    if flags is not None:
        yield Ref(doc, code.line, "flag", flags)


def heading_anchors(doc: Path) -> set[str]:
    """The anchors GitHub gives ``doc``'s headings: lower case, markup and
    punctuation dropped, spaces as hyphens, a repeat suffixed ``-1``, ``-2``."""
    text = doc.read_text(encoding="utf-8")
    originals = text.split("\n")
    found: set[str] = set()
    for number, line in enumerate(split_markdown(text)[1].split("\n")):
        if not re.match(r"#{1,6} ", line):  # a heading in the prose (not a comment in a block)
            continue
        heading = originals[number].lstrip("#").strip().rstrip("#").strip()  # spans kept: their words count
        slug = re.sub(r"[^\w\- ]", "", re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).lower()).replace(" ", "-")
        n = 0
        while (f"{slug}-{n}" if n else slug) in found:
            n += 1
        found.add(f"{slug}-{n}" if n else slug)
    return found


def problem(ref: Ref) -> str | None:
    """Why ``ref`` names nothing that exists now, or None."""
    if ref.kind == "name":
        return name_problem(ref.text)
    if ref.kind in ("path", "link"):
        base = Path("/") if ref.text.startswith("/") else ROOT  # a link out of the repository: absolute
        return None if path_exists(ref.text, base) else "no such file or folder"
    if ref.kind == "package path":
        found = path_exists(ref.text, PACKAGE, ROOT / "src", ROOT / "tests", ROOT / "benchmarks", ROOT)
        return None if found else "no such file or folder (looked in src/conformbench, src, tests, benchmarks, .)"
    if ref.kind == "file name":
        return None if _by_name().get(ref.text) else f"no file of that name in {', '.join(_SEARCHED)}"
    if ref.kind == "anchor":
        path, anchor = ref.text.split("#", 1)
        if not (ROOT / path).is_file():
            return None  # the link itself is reported
        return None if anchor in heading_anchors(ROOT / path) else f"{path} has no heading with the anchor #{anchor}"
    if ref.kind == "test":
        return named_test_problem(ref.text)
    if ref.kind == "name in file":
        return name_in_file_problem(ref.text)
    if ref.kind == "flag":
        unknown = unknown_flags(ref.text)
        return f"no conformbench command or benchmark takes {', '.join(unknown)}" if unknown else None
    return command_problem(shlex.split(ref.text))
