"""Shared fixtures of the schema-dataset tests: the default 602-schema
build (made once per session) and the JSON-Schema-Test-Suite location (shipped in the package)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformbench.files import JSON_SCHEMA_TEST_SUITE, shipped_data
from conformbench.schemas.build import BuildOptions, BuildResult, build_dataset


@pytest.fixture(scope="session")
def suite_dir() -> Path:
    """The JSON-Schema-Test-Suite copy shipped in the package."""
    return shipped_data(JSON_SCHEMA_TEST_SUITE)


@pytest.fixture(scope="session")
def full_build(tmp_path_factory: pytest.TempPathFactory) -> BuildResult:
    """The default dataset: 602 schemas, seed 0, every schema format."""
    out = tmp_path_factory.mktemp("dataset-602")
    return build_dataset(BuildOptions(out=out))
