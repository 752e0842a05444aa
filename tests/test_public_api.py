"""The public API is exactly what __all__ lists, and every name resolves."""

from __future__ import annotations

import ast
import importlib
import re
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
        "think_then_constrain", "tools", "unconstrained"]


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


#: the modules a user imports from: ``conformbench`` and the public modules
#: that, like it, only re-export (everything else is internal)
PUBLIC_MODULES = {"conformbench", "conformbench.api", "conformbench.arms", "conformbench.grammar_compiler",
                  "conformbench.testing"}
_ROOT = Path(__file__).resolve().parents[1]
_FENCE = re.compile(r"^```python\n(.*?)^```$", re.S | re.M)


def _code_of(path: Path) -> list[str]:
    """The Python a doc or example holds: a .py file whole, a Markdown file's ```python blocks."""
    text = path.read_text(encoding="utf-8")
    return [text] if path.suffix == ".py" else _FENCE.findall(text)


def _private_imports(code: str) -> list[str]:
    """Names ``code`` imports from outside the public modules (a block that
    is not valid Python, a shell session shown as Python, is read line by line)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return [line.strip() for line in code.splitlines()
                if re.match(r"\s*(from|import)\s+conformbench\.", line)
                and line.split()[1] not in PUBLIC_MODULES]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "conformbench":
            if node.module not in PUBLIC_MODULES:
                found.append(f"from {node.module} import {', '.join(a.name for a in node.names)}")
            else:
                found += [f"{node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
        elif isinstance(node, ast.Import):
            found += [f"import {a.name}" for a in node.names
                      if a.name.split(".")[0] == "conformbench" and a.name not in PUBLIC_MODULES]
    return found


def test_docs_and_examples_import_only_public_names() -> None:
    """What the docs and examples show a user is the public API: a doc that
    imports an internal module teaches a name that may change."""
    paths = sorted([*(_ROOT / "docs").rglob("*.md"), *(_ROOT / "examples").rglob("*.py"), _ROOT / "README.md"])
    private = {str(p.relative_to(_ROOT)): found for p in paths
               if (found := [i for code in _code_of(p) for i in _private_imports(code)])}
    assert private == {}


def test_the_public_import_check_catches_an_internal_import() -> None:
    doc = "text\n```python\nfrom conformbench import run\nfrom conformbench.scoring.table import ScoredTable\n```\n"
    assert [i for code in _FENCE.findall(doc) for i in _private_imports(code)] == [
        "from conformbench.scoring.table import ScoredTable"]
    assert _private_imports("import conformbench.runner.run\nfrom conformbench.grammar_compiler import lark_grammar") == [
        "import conformbench.runner.run"]


def test_public_modules_only_re_export() -> None:
    """A public module other than the package defines nothing itself (as
    httpx's public modules re-export from private ones)."""
    for name in PUBLIC_MODULES - {"conformbench"}:
        module = importlib.import_module(name)
        # a constant (a tuple of names) carries no __module__: it is the defining module's
        defined_here = [n for n in module.__all__ if getattr(getattr(module, n), "__module__", None) == name]
        assert module.__all__ and defined_here == []


def test_run_refuses_an_unknown_option() -> None:
    with pytest.raises(conformbench.UsageError, match=r"unknown run option 'taks' \(did you mean 'tasks'\?\)"):
        conformbench.run(taks=["gsm8k"])


def test_score_rescores_a_shipped_replay(tmp_path: Path) -> None:
    from conformbench.runner.shipped import shipped_replay

    done = conformbench.score(shipped_replay("gsm8k"), out=tmp_path)
    assert done.files.json == tmp_path / "report.json" and done.files.json.exists()
    assert [r.task for r in done.run.results] == ["gsm8k"] and done.run.results[0].n == 200
    assert done.exit_code == 0 and done.headline()


def test_runs_signature_is_typed_from_the_options_record() -> None:
    """One record is the source of the API's keywords: each field of
    RunOptions is a typed keyword of conformbench.run."""
    import dataclasses
    import inspect

    params = inspect.signature(conformbench.run).parameters
    for f in dataclasses.fields(conformbench.RunOptions):
        if f.name not in ("backend_options", "task_options", "axes"):  # the plugins' own: further keywords
            assert params[f.name].annotation == f.type and params[f.name].kind is inspect.Parameter.KEYWORD_ONLY
    assert params["backend_options"].kind is inspect.Parameter.KEYWORD_ONLY
    assert params["backend_keywords"].kind is inspect.Parameter.VAR_KEYWORD


def test_the_static_keywords_mirror_the_options_record() -> None:
    """mypy reads ``run``'s keywords from ``RunKeywords``: it must name the
    same options as ``RunOptions`` (the backends' own go in backend_options;
    the tasks' own, like the backends', are further keywords)."""
    import dataclasses

    from conformbench.runner.run_options import RunKeywords
    from conformbench.tasks.task_options import declared_axis_options

    fields = {f.name for f in dataclasses.fields(conformbench.RunOptions)} - {"backend_options", "task_options", "axes"}
    # and the shipped tasks' axes, which RunOptions carries in ``axes`` (their keyword, the axis's option)
    shipped = {key for key, axis in declared_axis_options().items() if set(axis.tasks) <= {"generation", "validation"}}
    assert shipped == {"schema_formats", "output_formats", "shots"}
    assert set(RunKeywords.__annotations__) == fields | shipped


def test_backend_options_are_checked_like_keywords(tmp_path: Path) -> None:
    with pytest.raises(conformbench.UsageError, match="backend_options: expected a mapping"):
        conformbench.run(out=tmp_path, backend_options=["batched"])  # type: ignore[arg-type]
    with pytest.raises(conformbench.UsageError, match="given twice"):
        conformbench.run(out=tmp_path, backend_options={"batched": 2}, **{"batched": 2})  # type: ignore[arg-type]
    with pytest.raises(conformbench.UsageError, match="'n' is a run option, not a backend option"):
        conformbench.run(out=tmp_path, backend_options={"n": 2})
    with pytest.raises(conformbench.UsageError, match="'shots' is a run option, not a backend option"):
        conformbench.run(out=tmp_path, backend_options={"shots": 3})  # an axis's keyword (RunOptions.axes)
    with pytest.raises(conformbench.UsageError, match="unknown run option 'batchd'.*batched"):
        conformbench.run(out=tmp_path, backend_options={"batchd": 2})
