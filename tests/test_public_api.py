"""The public API is exactly what __all__ lists, and every name resolves."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import conformbench


def test_all_names_resolve() -> None:
    missing = [name for name in conformbench.__all__ if not hasattr(conformbench, name)]
    assert missing == []


def test_all_is_sorted_and_unique() -> None:
    names = list(conformbench.__all__)
    assert names == sorted(names)
    assert len(names) == len(set(names))


def test_no_public_name_left_out() -> None:
    for name in conformbench.__all__:
        getattr(conformbench, name)  # names load on first use: bind them all first
    public = {n for n in vars(conformbench) if not n.startswith("_")}
    modules = {n for n, v in vars(conformbench).items() if type(v).__name__ == "module"}
    assert public - modules - {"annotations"} == set(conformbench.__all__) - {"__version__"}


def test_import_is_light_until_a_name_is_used() -> None:
    """A command's start pays only for what it uses (see __init__)."""
    code = ("import sys, conformbench; heavy = {'numpy', 'matplotlib', 'jsonschema', 'llama_cpp'}; "
            "print(sorted(heavy & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_registries_are_populated() -> None:
    assert {"json", "yaml", "xml", "python", "nl"} <= set(conformbench.schema_formats.names())
    assert {"json", "yaml", "xml"} <= set(conformbench.output_formats.names())
    assert {"gsm8k", "bfcl-simple", "custom", "generation", "validation"} <= set(
        conformbench.tasks.names())
    assert {"llamacpp", "openai", "replay"} <= set(conformbench.backends.names())
    assert {"gbnf", "llguidance", "outlines", "xgrammar"} <= set(conformbench.engines.names())
    assert conformbench.arms.names() == [
        "constrained", "fallback", "prompt_only", "reason_then_constrain", "repair", "resample",
        "unconstrained"]


def _conformbench_imports(path: Path) -> list[str]:
    """Every conformbench module an example or benchmark imports from."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "conformbench":
            found.append(node.module)
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] == "conformbench"]
    return found


def test_examples_use_only_the_public_api() -> None:
    """What an example shows a user must be the public API: names from
    ``conformbench`` itself, never from its internal modules."""
    examples = sorted((Path(__file__).resolve().parents[1] / "examples").rglob("*.py"))
    assert examples
    inside = {str(p.name): [m for m in _conformbench_imports(p) if m != "conformbench"] for p in examples}
    assert {name: mods for name, mods in inside.items() if mods} == {}


def test_run_refuses_an_unknown_option() -> None:
    with pytest.raises(conformbench.UsageError, match=r"unknown run option 'taks' \(did you mean 'tasks'\?\)"):
        conformbench.run(taks=["gsm8k"])


def test_score_rescores_a_shipped_replay(tmp_path: Path) -> None:
    from conformbench.runner.shipped import shipped_replay

    done = conformbench.score(shipped_replay("gsm8k"), out=tmp_path)
    assert done.files.json == tmp_path / "report.json" and done.files.json.exists()
    assert [r.task for r in done.run.results] == ["gsm8k"] and done.run.results[0].n == 200
    assert done.exit_code == 0 and done.headline()
