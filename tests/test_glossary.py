"""docs/glossary.md names one word per concept; every code name it lists
(a backticked ``conformbench.…`` path) exists, and README's "How it is
built" links to it."""

from __future__ import annotations

import ast
import importlib
import re
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GLOSSARY = ROOT / "docs" / "glossary.md"
SRC = ROOT / "src" / "conformbench"
_NAME = re.compile(r"`(conformbench(?:\.[A-Za-z_][A-Za-z0-9_]*)+)`")


def _names() -> list[str]:
    return sorted(set(_NAME.findall(GLOSSARY.read_text(encoding="utf-8"))))


def resolve(dotted: str) -> object:
    """The module, or the attribute of the longest importable module prefix, ``dotted`` names."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            found = getattr(found, attribute)
        return found
    raise ModuleNotFoundError(dotted)


def test_the_glossary_lists_code_names() -> None:
    assert len(_names()) >= 30


@pytest.mark.parametrize("dotted", _names())
def test_every_code_name_it_lists_exists(dotted: str) -> None:
    assert resolve(dotted) is not None


def test_a_missing_name_is_caught() -> None:
    with pytest.raises(AttributeError):
        resolve("conformbench.records.rounds.NoSuchVerdict")
    with pytest.raises(ModuleNotFoundError):
        resolve("conformbench_nothing.x")


def test_readme_links_it_from_how_it_is_built() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## How it is built", 1)[1].split("\n## ", 1)[0]
    assert "docs/glossary.md" in section


def test_one_definition_per_concept_in_the_source() -> None:
    """Issue #61: grep finds one ``percentile``, one ``Verdict``, one
    ``TokenStats`` and one ``GenerationKey`` (which replaced both
    ``generation_spec``s)."""
    found: Counter[str] = Counter()
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.ClassDef):
                found[node.name] += 1
    assert [found[name] for name in ("percentile", "Verdict", "TokenStats", "GenerationKey")] == [1, 1, 1, 1]
    assert found["generation_spec"] == 0
