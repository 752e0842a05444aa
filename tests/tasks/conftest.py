"""A small dataset built with the real generator, shared by the ConCodeEval
task tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformbench.schemas.build import BuildOptions, build_dataset


@pytest.fixture(scope="session")
def concodeeval_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("concodeeval-dataset")
    build_dataset(BuildOptions(out=out, n=16, seed=3))
    return out
