"""Hypothesis is reproducible in CI (issue #28): tests/conftest.py loads a
derandomized profile unless HYPOTHESIS_PROFILE asks for another, so the
README's `pytest` on a fresh clone draws the same examples every run."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings


@pytest.mark.skipif(os.environ.get("HYPOTHESIS_PROFILE", "ci") != "ci", reason="an exploratory profile was asked for")
def test_the_default_profile_is_derandomized() -> None:
    assert settings.default.derandomize is True
    assert settings.default.database is None  # no example replayed from a local database either


def test_the_exploratory_profile_stays_available() -> None:
    assert settings.get_profile("explore").derandomize is False
