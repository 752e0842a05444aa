"""The public API is exactly what __all__ lists, and every name resolves."""

from __future__ import annotations

import subprocess
import sys

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
        "constrained", "prompt_only", "reason_then_constrain", "unconstrained"]
