"""Shared fixtures of the schema-dataset tests: the default 602-schema
build (made once per session) and the JSON-Schema-Test-Suite location."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformbench.schemas.build import BuildOptions, BuildResult, build_dataset


def shared_dir() -> Path:
    """shared/ beside the checkout (the repository root's parent holds it)."""
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "shared"
        if (candidate / "data").is_dir():
            return candidate
    raise RuntimeError("shared/ not found beside the checkout")


@pytest.fixture(scope="session")
def suite_dir() -> Path:
    """The JSON-Schema-Test-Suite copy in shared/data."""
    return shared_dir() / "data" / "json-schema-test-suite"


@pytest.fixture(scope="session")
def full_build(tmp_path_factory: pytest.TempPathFactory) -> BuildResult:
    """The default dataset: 602 schemas, seed 0, every schema format."""
    out = tmp_path_factory.mktemp("dataset-602")
    return build_dataset(BuildOptions(out=out))
