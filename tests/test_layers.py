"""Imports run one way, down the layers: a package may import its own layer
and the layers below it, never one above, and packages form no cycle.

Every import counts, including those inside functions and under
TYPE_CHECKING: a lazy import up the layers is still a dependency up the
layers."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "src" / "conformbench"

#: bottom to top; packages in one tuple share a layer and must not import each other
LAYERS: tuple[tuple[str, ...], ...] = (
    ("_version", "errors"),
    ("jsontypes", "registry", "files"),
    ("records",),
    ("validator",),
    ("formats",),
    ("schemas", "arms"),
    ("arms_builtin", "engines"),
    ("backends",),
    ("audits",),
    ("tasks",),
    ("runner", "scoring"),
    ("importers", "reports"),
    ("api",),
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


def _imports(path: Path, root: Path) -> list[tuple[str, int]]:
    """(imported conformbench package, line) for every import in ``path``."""
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
                names = [".".join([*base, *([node.module] if node.module else [])])]
            elif node.module:
                names = [node.module]
        for name in names:
            parts = name.split(".")
            if parts[0] == "conformbench" and len(parts) > 1:
                found.append((parts[1], node.lineno))
    return found


def _edges(root: Path = ROOT) -> dict[tuple[str, str], list[str]]:
    edges: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in sorted(root.rglob("*.py")):
        src = _package_of(path, root)
        for dst, line in _imports(path, root):
            if dst != src:
                edges[(src, dst)].append(f"{path.relative_to(root)}:{line}")
    return edges


def _upward(edges: dict[tuple[str, str], list[str]]) -> list[str]:
    return [
        f"{src} -> {dst} at {', '.join(where)}"
        for (src, dst), where in edges.items()
        if LEVEL.get(dst, -1) >= LEVEL.get(src, -1)
    ]


def _cycles(edges: dict[tuple[str, str], list[str]]) -> list[str]:
    graph: dict[str, set[str]] = defaultdict(set)
    for src, dst in edges:
        graph[src].add(dst)

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for nxt in list(graph[start]):
            if nxt == goal or (nxt not in seen and reaches(nxt, goal, seen | {nxt})):
                return True
        return False

    return sorted(p for p in list(graph) if reaches(p, p, {p}))


def test_every_package_has_a_layer() -> None:
    packages = {_package_of(p) for p in ROOT.rglob("*.py")}
    assert packages - set(LEVEL) == set(), "add new packages to LAYERS"


def test_imports_run_down_the_layers() -> None:
    assert _upward(_edges()) == []


def test_no_cycle_between_packages() -> None:
    assert _cycles(_edges()) == []


def _fake_package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "conformbench"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_the_checks_catch_an_upward_import_and_a_cycle(tmp_path: Path) -> None:
    root = _fake_package(tmp_path, {
        "records/__init__.py": "",
        # lazy, inside a function: still an upward dependency
        "records/item.py": "def f():\n    from conformbench.cli.main import app\n",
        "cli/__init__.py": "",
        "cli/main.py": "from ..records import item\n",
        "tasks/__init__.py": "from conformbench.runner import x\n",
        "runner/__init__.py": "from conformbench.tasks import y\n",
    })
    edges = _edges(root)
    assert _upward(edges) == [
        "records -> cli at records/item.py:2",
        "tasks -> runner at tasks/__init__.py:1",
    ]
    assert _cycles(edges) == ["cli", "records", "runner", "tasks"]
