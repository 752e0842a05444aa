"""Makes the run/score test helpers of tests/runner importable here."""

from __future__ import annotations

import sys
from pathlib import Path

_RUNNER_TESTS = str(Path(__file__).resolve().parents[1] / "runner")
if _RUNNER_TESTS not in sys.path:
    sys.path.insert(0, _RUNNER_TESTS)
