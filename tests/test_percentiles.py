"""One percentile, one definition (issue #61): ``engines check`` and
``engines cost`` read their p50/p95/p99 with ``conformbench.percentiles``
(linear interpolation, numpy's default)."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from conformbench.audits.engine_check.summary import timing
from conformbench.percentiles import percentile
from conformbench.serving import stats

SRC = Path(__file__).resolve().parents[1] / "src" / "conformbench"


@pytest.mark.parametrize("q", [0, 50, 95, 99, 100])
def test_it_interpolates_as_numpy(q: float) -> None:
    values = [3.0, 1.0, 4.0, 1.5, 9.0, 2.6, 5.0]
    assert percentile(values, q) == pytest.approx(float(np.percentile(values, q)))


def test_engines_check_and_engines_cost_read_the_same_percentile() -> None:
    seconds = [0.001, 0.002, 0.003, 0.004]
    # nearest rank gave 2 ms for the median of four; linear interpolation gives 2.5 ms
    assert timing(seconds).p50_ms == pytest.approx(2.5)
    assert stats.percentile is percentile


def test_one_definition_in_the_source() -> None:
    defined = [str(path.relative_to(SRC)) for path in SRC.rglob("*.py")
               for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
               if isinstance(node, ast.FunctionDef) and node.name == "percentile"]
    assert defined == ["percentiles.py"]
