"""Every recipe of docs/extending.md runs as written: each ```python block
is a complete program, run in a fresh interpreter in a temporary folder (its
registrations must not leak into this process), and must exit 0."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "extending.md"
_BLOCK = re.compile(r"^## (?P<title>.+?)$.*?^```python\n(?P<code>.*?)^```$", re.S | re.M)


def _recipes() -> dict[str, str]:
    return {m["title"]: m["code"] for m in _BLOCK.finditer(DOC.read_text(encoding="utf-8"))}


def test_every_extension_point_has_a_recipe() -> None:
    assert sorted(_recipes()) == sorted([
        "A backend", "An engine", "A schema format", "An output format", "A task", "An arm",
        "A report section"])


@pytest.mark.long
@pytest.mark.parametrize("title", sorted(_recipes()))
def test_recipe_runs(title: str, tmp_path: Path) -> None:
    script = tmp_path / "recipe.py"
    script.write_text(_recipes()[title], encoding="utf-8")
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip(), "each recipe prints what it made"
