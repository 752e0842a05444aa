"""Output piped or logged (stdout not a terminal): whole lines, not a table
laid out in 80 columns with cells cut by an ellipsis (issue #44)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


@pytest.mark.parametrize("columns", [None, "80"])
def test_a_piped_table_keeps_whole_cells(columns: str | None) -> None:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    if columns:
        env["COLUMNS"] = columns
    done = subprocess.run([sys.executable, "-m", "conformbench.cli.main", "list", "models"],
                          capture_output=True, text=True, timeout=120, env=env, check=False)
    assert done.returncode == 0, done.stderr
    assert "…" not in done.stdout
    whole = "Gemma 3 270M, Q4_K_M GGUF (base model; Gemma terms), assembled from its PyPI chunks on first use"
    assert any(whole in line for line in done.stdout.splitlines()), done.stdout


@pytest.mark.parametrize("command", [["run"], ["score"], ["validate"], ["engines", "check"]])
def test_piped_help_cuts_no_name(command: list[str]) -> None:
    """Issue #48: help piped was laid out in 80 columns, cutting names."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "TERMINAL_WIDTH")}
    done = subprocess.run([sys.executable, "-m", "conformbench.cli.main", *command, "-h"],
                          capture_output=True, text=True, timeout=120, env=env, check=False)
    assert done.returncode == 0, done.stderr
    assert "…" not in done.stdout
