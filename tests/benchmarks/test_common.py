"""benchmarks/_common.py's helpers that the scripts share."""

from __future__ import annotations

import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

from _common import hf_model_folder  # noqa: E402


def test_a_given_hf_folder_is_used_as_it_is(tmp_path: Path) -> None:
    """The vLLM benchmarks' one lookup of the model folder: the folder the
    user gave is taken, and nothing is converted into the work folder."""
    given, work = tmp_path / "given", tmp_path / "work"
    work.mkdir()
    assert hf_model_folder(given, work) == given
    assert not any(work.iterdir())


def test_rounds_alternate_the_order_of_the_sides() -> None:
    from _common import alternated

    assert list(alternated(("a", "b"), 3)) == [(0, "a"), (0, "b"), (1, "b"), (1, "a"), (2, "a"), (2, "b")]
