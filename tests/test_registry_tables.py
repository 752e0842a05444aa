"""Every registry's table of built-in names equals the decorators in the
source: each listed module registers the name it is listed under, and no
``@registry.register("name")`` in src/ is missing from its table. Read from
the source text (AST), so the check itself imports no plugin."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conformbench.arms.base import arms
from conformbench.backends.base import backends
from conformbench.engines.base import engines
from conformbench.formats.base import output_formats, schema_formats
from conformbench.registry import Registry
from conformbench.scoring.sections import run_sections, sections
from conformbench.tasks.base import tasks

SRC = Path(__file__).resolve().parents[1] / "src"

#: the variable each registry is bound to in the source
REGISTRIES: dict[str, Registry[object]] = {
    "arms": arms, "backends": backends, "engines": engines, "output_formats": output_formats,
    "schema_formats": schema_formats, "sections": sections, "run_sections": run_sections, "tasks": tasks,
}  # type: ignore[dict-item]


def _decorated() -> dict[str, dict[str, str]]:
    """registry variable -> {name: module} for every literal register call."""
    found: dict[str, dict[str, str]] = {key: {} for key in REGISTRIES}
    for path in sorted((SRC / "conformbench").rglob("*.py")):
        module = ".".join(path.relative_to(SRC).with_suffix("").parts)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "register" and isinstance(node.func.value, ast.Name)
                    and node.func.value.id in REGISTRIES and node.args
                    and isinstance(node.args[0], ast.Constant)):
                found[node.func.value.id][node.args[0].value] = module
    return found


@pytest.mark.long
@pytest.mark.parametrize("variable", sorted(REGISTRIES))
def test_table_lists_every_decorated_name(variable: str) -> None:
    table = REGISTRIES[variable].builtins
    for name, module in _decorated()[variable].items():
        assert table.get(name) == module, f"add {name!r}: {module!r} to the {variable} table"


@pytest.mark.parametrize("variable", sorted(REGISTRIES))
def test_every_listed_module_registers_its_name(variable: str) -> None:
    registry = REGISTRIES[variable]
    for name in registry.builtins:
        assert registry.get(name) is not None


def test_one_lookup_imports_one_format_module() -> None:
    """Asking for the json output format imports neither the Pydantic
    renderer nor the other formats."""
    code = textwrap.dedent("""
        import sys
        from conformbench.formats.base import output_formats
        output_formats.create("json").parse('{"a": 1}')
        loaded = sorted(m for m in sys.modules if m.startswith("conformbench.formats."))
        print(loaded)
        assert not any(m.startswith(("conformbench.formats.python", "conformbench.formats.xml",
                                     "conformbench.formats.yaml", "conformbench.formats.nl")) for m in loaded)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
