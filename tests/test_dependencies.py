"""Every package the source imports is declared in pyproject.toml: in the
dependencies, or in the extra that the importing feature needs. A package
that only arrives as another package's dependency (jinja2 through
llama-cpp-python, attrs through jsonschema, click through old typer) breaks
the day that package stops depending on it."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "conformbench"

#: import name -> distribution, for packages not installed here (an extra
#: CI leaves out: xgrammar's wheel needs triton)
NOT_INSTALLED = {"xgrammar": "xgrammar"}


def _type_checking_only(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _imported(tree: ast.AST) -> set[str]:
    """Top-level names of the modules imported, outside ``if TYPE_CHECKING``."""
    found: set[str] = set()
    for node in ast.iter_child_nodes(tree):
        if _type_checking_only(node):
            continue
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.split(".")[0])
        found |= _imported(node)
    return found


def _names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=\[;! ~]", r, maxsplit=1)[0].lower().replace("_", "-") for r in requirements}


def test_every_imported_package_is_declared() -> None:
    imported: set[str] = set()
    for path in SRC.rglob("*.py"):
        imported |= _imported(ast.parse(path.read_text(encoding="utf-8")))
    third_party = imported - set(sys.stdlib_module_names) - {"conformbench", "__future__"}
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = _names(project["dependencies"])
    for extra, requirements in project["optional-dependencies"].items():
        if extra != "test":  # the test extra installs nothing a user's feature may need
            declared |= _names(requirements)
    where = packages_distributions()
    undeclared = []
    for module in sorted(third_party):
        dists = {d.lower().replace("_", "-") for d in where.get(module, [])} or {NOT_INSTALLED.get(module, module)}
        if not dists & declared:
            undeclared.append(f"{module} ({', '.join(sorted(dists))})")
    assert len(third_party) > 20  # the walk found the imports at all
    assert not undeclared, f"imported but not declared in pyproject.toml: {undeclared}"
