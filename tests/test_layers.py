"""Imports run one way, down the layers: a package may import its own layer
and the layers below it, never one above; packages form no cycle, and
neither do the modules of one package.

Every import counts, including those inside functions and under
TYPE_CHECKING: a lazy import up the layers is still a dependency up the
layers, and a lazy import back into a module that imports this one is still
a cycle. ``from pkg import name`` imports ``pkg`` and, where ``name`` is a
submodule, ``pkg.name``."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "src" / "conformbench"

#: bottom to top; packages in one tuple share a layer and must not import each other
LAYERS: tuple[tuple[str, ...], ...] = (
    ("_version", "errors", "stopping"),
    ("nofollow",),
    ("jsontypes", "registry", "files", "percentiles"),
    ("records",),
    ("validator",),
    ("formats",),
    ("schemas",),
    ("engines",),
    ("backends", "arms"),
    ("audits",),
    ("tasks",),
    ("runner", "scoring"),
    ("importers", "exporters", "integrations", "reports", "serving"),
    ("api", "grammar_compiler", "testing"),
    ("cli", "__init__"),
)
LEVEL = {pkg: i for i, layer in enumerate(LAYERS) for pkg in layer}


def _package_of(path: Path, root: Path = ROOT) -> str:
    rel = path.relative_to(root)
    return rel.parts[0].removesuffix(".py") if len(rel.parts) > 1 or rel.name != "__init__.py" else "__init__"


def _module_of(path: Path, root: Path) -> str:
    rel = path.relative_to(root).with_suffix("")
    parts = ["conformbench", *rel.parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules(root: Path) -> dict[str, Path]:
    return {_module_of(path, root): path for path in root.rglob("*.py")}


def _imported(path: Path, root: Path, modules: dict[str, Path]) -> list[tuple[str, int]]:
    """(imported conformbench module, line) for every import in ``path``:
    the module named, and for ``from m import n`` the submodule ``m.n``
    where there is one."""
    found: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = _module_of(path, root).split(".")
                if path.name != "__init__.py":
                    base = base[:-1]
                base = base[: len(base) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            elif node.module:
                module = node.module
            else:
                continue
            names = [module, *(f"{module}.{a.name}" for a in node.names if f"{module}.{a.name}" in modules)]
        found += [(name, node.lineno) for name in names if name.split(".")[0] == "conformbench"]
    return found


def _imports(path: Path, root: Path, modules: dict[str, Path]) -> list[tuple[str, int]]:
    """(imported conformbench package, line) for every import in ``path``."""
    found = _imported(path, root, modules)
    return list(dict.fromkeys((name.split(".")[1], line) for name, line in found if "." in name))


def _edges(root: Path = ROOT) -> dict[tuple[str, str], list[str]]:
    modules = _modules(root)
    edges: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in sorted(root.rglob("*.py")):
        src = _package_of(path, root)
        for dst, line in _imports(path, root, modules):
            if dst != src:
                edges[(src, dst)].append(f"{path.relative_to(root)}:{line}")
    return edges


def _upward(edges: dict[tuple[str, str], list[str]]) -> list[str]:
    return [
        f"{src} -> {dst} at {', '.join(where)}"
        for (src, dst), where in edges.items()
        if LEVEL.get(dst, -1) >= LEVEL.get(src, -1)
    ]


def _module_edges(root: Path = ROOT) -> dict[tuple[str, str], list[str]]:
    """Imports between modules of one package (between packages, the
    package edges say it)."""
    modules = _modules(root)
    edges: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in sorted(root.rglob("*.py")):
        src = _module_of(path, root)
        for dst, line in _imported(path, root, modules):
            if dst in modules and dst != src and _package_of(modules[dst], root) == _package_of(path, root):
                edges[(src, dst)].append(f"{path.relative_to(root)}:{line}")
    return edges


def _reach(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        for nxt in graph[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def _groups(edges: dict[tuple[str, str], list[str]]) -> list[list[str]]:
    """The cycles: sets of nodes that all reach each other, each sorted."""
    graph: dict[str, set[str]] = defaultdict(set)
    for src, dst in edges:
        graph[src].add(dst)
    reach = {node: _reach(graph, node) for node in list(graph)}
    found = {tuple(sorted(m for m in reach[n] if n in reach.get(m, set()))) for n in reach if n in reach[n]}
    return sorted(list(group) for group in found)


def _cycles(edges: dict[tuple[str, str], list[str]]) -> list[str]:
    return sorted(node for group in _groups(edges) for node in group)


def _module_cycles(edges: dict[tuple[str, str], list[str]]) -> list[str]:
    """One line per cycle: its imports, with where each is."""
    return [
        "; ".join(f"{src} -> {dst} at {', '.join(where)}"
                  for (src, dst), where in sorted(edges.items()) if src in group and dst in group)
        for group in _groups(edges)
    ]


def test_every_package_has_a_layer() -> None:
    packages = {_package_of(p) for p in ROOT.rglob("*.py")}
    assert packages - set(LEVEL) == set(), "add new packages to LAYERS"


def test_imports_run_down_the_layers() -> None:
    assert _upward(_edges()) == []


def test_no_cycle_between_packages() -> None:
    assert _cycles(_edges()) == []


def test_no_cycle_between_modules_of_one_package() -> None:
    assert _module_cycles(_module_edges()) == []


def _fake_package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "conformbench"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_the_checks_catch_an_upward_import_and_cycles(tmp_path: Path) -> None:
    root = _fake_package(tmp_path, {
        "records/__init__.py": "",
        # lazy, inside a function: still an upward dependency
        "records/item.py": "def f():\n    from conformbench.cli.main import app\n",
        "cli/__init__.py": "",
        "cli/main.py": "from ..records import item\n",
        "tasks/__init__.py": "from conformbench.runner import x\n",
        "runner/__init__.py": "from conformbench.tasks import y\n",
        # a module cycle inside one package: under TYPE_CHECKING, lazy, and
        # as ``from package import submodule``; d only imports into it
        "schemas/__init__.py": "",
        "schemas/a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from conformbench.schemas.b import B\n",
        "schemas/b.py": "def f():\n    from . import c\n",
        "schemas/c.py": "from conformbench.schemas import a\n",
        "schemas/d.py": "from conformbench.schemas.a import x\n",
    })
    edges = _edges(root)
    assert _upward(edges) == [
        "records -> cli at records/item.py:2",
        "tasks -> runner at tasks/__init__.py:1",
    ]
    assert _cycles(edges) == ["cli", "records", "runner", "tasks"]
    # records.item <-> cli.main crosses packages: the package cycle above, not a module cycle
    assert _module_cycles(_module_edges(root)) == [
        "conformbench.schemas.a -> conformbench.schemas.b at schemas/a.py:3; "
        "conformbench.schemas.b -> conformbench.schemas.c at schemas/b.py:2; "
        "conformbench.schemas.c -> conformbench.schemas.a at schemas/c.py:1",
    ]


# ------------------------------------------------------------------ sizes and names

#: the longest module and function src/ may hold (the project's standards:
#: modules under ~400 lines, functions under ~50)
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60


def _long_functions(root: Path = ROOT) -> list[str]:
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    found.append(f"{path.relative_to(root)}:{node.lineno} {node.name} ({length} lines)")
    return found


def test_no_module_over_400_lines() -> None:
    long = {str(p.relative_to(ROOT)): n for p in sorted(ROOT.rglob("*.py"))
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert long == {}


def test_no_function_over_60_lines() -> None:
    assert _long_functions() == []


def test_one_wilson_interval() -> None:
    """One function computes the Wilson interval (scoring's, on scipy); the
    others call it."""
    defined = [f"{p.relative_to(ROOT)}:{node.lineno}" for p in sorted(ROOT.rglob("*.py"))
               for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
               if isinstance(node, ast.FunctionDef) and node.name.startswith("wilson")]
    assert len(defined) <= 1, defined


#: module names that stand for one kind of thing wherever they appear: each
#: package's ``base`` (its interface and registry), each format's ``format``,
#: each backend's own ``backend``/``attention``/``vocabulary``, ``__init__``.
#: Any other name in two places must mean the same thing in both; the ones
#: that do are listed with the reason.
SHARED_MODULE_NAMES: dict[str, str] = {
    "__init__": "a package",
    "base": "a package's interface and its registry",
    "format": "one schema/output format's implementation",
    "backend": "one backend's class (backends/<name>/backend.py)",
    "attention": "one backend's attention capture (backends/<name>/attention.py)",
    "vocabulary": "one backend's token vocabulary (backends/<name>/vocabulary.py)",
    "manifest": "what a plugin declares: backends/manifest.py the record, backends/<name>/manifest.py each one's",
    "run": "running a command: cli/run.py calls runner/run.py; engine_check/run.py and probe/run.py are "
           "the check's and the probe's own runs",
    "records": "an audit's result records: audits/engine_check/records.py (the check's), "
               "audits/probe/records.py (the probe's)",
    "journal": "a command's resume journal: serving/journal.py (engines cost's), audits/probe/journal.py (the probe's)",
    "group": "a command group's typer app and what its subcommands share: cli/imports/group.py, "
             "cli/engines/group.py",
    "markdown": "a report as Markdown: reports/markdown.py (a run's report.md), audits/probe/markdown.py (the probe's)",
    "score": "scoring replays: cli/score.py calls scoring/score.py",
    "reproduce": "rerunning a replay's spec: cli/reproduce.py calls scoring/reproduce.py's comparison",
    "inspect_log": "Inspect AI logs: importers/ reads them, exporters/ writes them",
    "spec": "the run spec: records/spec.py is its record, runner/spec.py reads it from TOML",
    "replay": "replay files: records/replay.py holds their records, backends/replay.py serves them",
    "sections": "report sections: scoring/sections.py (the registry), scoring/concodeeval/sections.py (ConCodeEval's)",
    "metrics": "scored metrics: scoring/metrics.py (arms tasks), scoring/concodeeval/metrics.py (ConCodeEval's)",
    "generation": "a generation: records/generation.py (its record), tasks/concodeeval/generation.py (the task)",
    "instruments": "decoding instruments: runner/instruments.py checks them, backends/llamacpp/instruments.py runs them",
}

#: set by /work/rename43.sh (issue #43's renames, run by the lead after merging every branch):
#: until then three `sampling`, two `compare`, `keywords`, `stats`, `builder`... still stand
RENAMES_APPLIED = True


def _ambiguous_module_names(root: Path = ROOT) -> dict[str, list[str]]:
    where: dict[str, list[str]] = defaultdict(list)
    for path in sorted(root.rglob("*.py")):
        where[path.stem].append(str(path.relative_to(root)))
    return {name: paths for name, paths in where.items() if len(paths) > 1 and name not in SHARED_MODULE_NAMES}


@pytest.mark.skipif(not RENAMES_APPLIED, reason="enabled by the issue #43 rename script once every branch is merged")
def test_no_module_name_means_two_things() -> None:
    assert _ambiguous_module_names() == {}


def test_the_size_and_name_checks_catch_offenders(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    root = _fake_package(tmp_path, {
        "tasks/__init__.py": "",
        "tasks/helpers.py": f"def long():\n{body}\n",
        "engines/__init__.py": "",
        "engines/helpers.py": "def short():\n    pass\n",
        "engines/base.py": "",
        "formats/base.py": "",
    })
    assert _long_functions(root) == [f"tasks/helpers.py:1 long ({MAX_FUNCTION_LINES + 1} lines)"]
    assert _ambiguous_module_names(root) == {"helpers": ["engines/helpers.py", "tasks/helpers.py"]}


# ------------------------------------------------------------------ families

#: the most modules of one folder that may share a name's first word (``x.py``,
#: ``x_a.py``, ``x_b.py`` is a family of 3): more is a concept split by
#: count, and becomes a subpackage ``x/`` whose ``__init__`` says what it owns
MAX_FAMILY = 2


def _family(stem: str) -> str:
    """The prefix a module shares with its family: its name's first word,
    or ``_`` for a private module (``_a.py``, ``_b_c.py``)."""
    return "_" if stem.startswith("_") else stem.split("_")[0] + "_"


def _prefix_families(root: Path = ROOT) -> list[str]:
    """Each folder's flat families of more than ``MAX_FAMILY`` modules whose
    names share a prefix, one line each."""
    found = []
    for folder in sorted({p.parent for p in root.rglob("*.py")}):
        families: dict[str, list[str]] = defaultdict(list)
        for path in sorted(folder.glob("*.py")):
            if path.stem != "__init__":
                families[_family(path.stem)].append(path.name)
        found += [f"{folder.relative_to(root).as_posix()}/{prefix}*: {', '.join(names)}"
                  for prefix, names in families.items() if len(names) > MAX_FAMILY]
    return found



def test_no_flat_family_of_modules_sharing_a_prefix() -> None:
    families = _prefix_families()
    assert families == [], (
        f"more than {MAX_FAMILY} modules of one folder share a prefix; make them a subpackage named for the "
        "concept (its __init__ docstring saying what it owns), or name each for what it holds:\n"
        + "\n".join(families))


def test_the_family_check_catches_a_family(tmp_path: Path) -> None:
    root = _fake_package(tmp_path, {
        "audits/__init__.py": "", "audits/probe.py": "", "audits/probe_cases.py": "", "audits/probe_twins.py": "",
        "audits/canary.py": "", "audits/canary_tools.py": "", "audits/probes.py": "",
        "cli/__init__.py": "", "cli/_a.py": "", "cli/_b_c.py": "", "cli/_d.py": "", "cli/run.py": "",
        "cli/imports/__init__.py": "", "cli/imports/group.py": "", "cli/imports/group_b.py": "",
    })
    assert _prefix_families(root) == [
        "audits/probe_*: probe.py, probe_cases.py, probe_twins.py",
        "cli/_*: _a.py, _b_c.py, _d.py",
    ]
