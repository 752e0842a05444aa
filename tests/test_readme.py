"""The README opens with the two commands for a fresh machine, and CI runs the
second one as written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

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


def test_readme_stays_short() -> None:
    """The README is the front door: commands, what the tool is, one headline
    table per job, the tour and links; the full tables live in docs/results.md."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250


@pytest.mark.long
@pytest.mark.slow
def test_readme_python_example_runs(tmp_path: Path) -> None:
    """The README's library example, as written (the embedded model, live)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```python\n(.*?)```", text, re.DOTALL)
    assert block is not None
    script = tmp_path / "example.py"
    script.write_text(block.group(1), encoding="utf-8")
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=900, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "gsm8k" in proc.stdout and (tmp_path / "rescored" / "report.json").exists()


@pytest.mark.long
def test_readme_counts_the_long_tests_plain_pytest_leaves_out() -> None:
    """The README's `pytest -m long` count is what `pytest --collect-only -m
    long` collects, and what plain `pytest` deselects (issue #48: 204 said, 205 left out)."""
    said = re.search(r"`pytest -m long` runs the (\d+) tests", (ROOT / "README.md").read_text(encoding="utf-8"))
    assert said is not None

    def tail(*marks: str) -> str:
        done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                               *marks], cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
        return done.stdout.strip().splitlines()[-1]

    long = re.match(r"(\d+)/\d+ tests collected", tail("-m", "long"))
    plain = re.search(r"\((\d+) deselected\)", tail())
    assert long is not None and plain is not None
    assert int(said.group(1)) == int(long.group(1)) == int(plain.group(1))
