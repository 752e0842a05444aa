"""Strings from regular expressions."""

from __future__ import annotations

import random
import re

import pytest

from conformbench.schemas.regexgen import regex_samples


@pytest.mark.parametrize(
    "pattern",
    ["^[a-z]+$", "^[0-9]{3}-[0-9]{4}$", "^(foo|bar)_\\d+$", "[aeiou]", "^#[0-9a-fA-F]{6}$",
     "^v[0-9]+\\.[0-9]+\\.[0-9]+$", "_id$", "^(a)\\1b$", "^[^a-c]{2}$", "^\\w+@\\w+\\.com$"],
)
def test_samples_match(pattern: str) -> None:
    samples = list(regex_samples(pattern, random.Random(0)))
    assert samples, pattern
    assert all(re.search(pattern, s) for s in samples)
    assert len(set(samples)) == len(samples)


def test_length_bounds_are_met() -> None:
    samples = list(regex_samples("^[a-z]+$", random.Random(1), min_len=5, max_len=8))
    assert samples and all(5 <= len(s) <= 8 for s in samples)


def test_unanchored_patterns_get_varied_names() -> None:
    assert len(list(regex_samples("_id$", random.Random(2)))) >= 3


def test_deterministic_for_a_seed() -> None:
    assert list(regex_samples("^[a-z]{2,9}$", random.Random(5))) == list(
        regex_samples("^[a-z]{2,9}$", random.Random(5))
    )


def test_bad_or_foreign_patterns_yield_nothing() -> None:
    assert list(regex_samples("(", random.Random(0))) == []
    assert list(regex_samples("\\p{Letter}", random.Random(0))) == []
