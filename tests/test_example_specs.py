"""Every spec in examples/specs builds, and each of its tasks builds its
conditions, without a model: a spec a doc tells users to run is never
broken by a rename."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformbench.runner.defaults import build_spec
from conformbench.runner.run_options import RunOptions
from conformbench.tasks.base import tasks

SPECS = sorted((Path(__file__).resolve().parents[1] / "examples" / "specs").glob("*.toml"))


@pytest.mark.parametrize("path", SPECS, ids=[p.stem for p in SPECS])
def test_the_example_spec_builds(path: Path) -> None:
    spec = build_spec(path, RunOptions())
    for task in spec.tasks:
        built = tasks.get(task.name)(task.options())
        assert built.conditions(), (path.name, task.name)


def test_every_example_spec_is_checked() -> None:
    assert len(SPECS) >= 13 and any(p.stem == "concodeeval-generation-repair" for p in SPECS)
