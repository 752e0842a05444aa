"""The README opens with the two commands for a fresh machine, and CI runs the
second one as written."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```bash\n(.*?)```", text, re.DOTALL)
    assert block is not None, "the README must open with a bash block"
    return [line.split("  #")[0].strip() for line in block.group(1).splitlines() if line.strip()]


def test_readme_opens_with_install_and_run_then_install_and_test() -> None:
    run, test = _readme_commands()
    assert run.startswith("pip install") and run.endswith("conformbench run")
    assert test.startswith("pip install") and "[test]" in test and test.endswith("pytest")


def test_ci_runs_the_readme_test_command_as_written() -> None:
    _, test = _readme_commands()
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert any(line.strip().startswith(test) for line in ci.splitlines())


def test_ci_runs_the_lint_gates() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "ruff check src tests" in ci and "\nmypy" in ci
