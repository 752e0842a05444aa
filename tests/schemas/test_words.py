"""Word sources: real English property names, lorem text, deterministic."""

from __future__ import annotations

import keyword
import random

from conformbench.schemas.words import lorem_text, word_pool


def test_names_are_plain_identifiers() -> None:
    pool = word_pool()
    assert len(pool.names) > 3000
    assert all(n.isascii() and n.isalpha() and n.islower() for n in pool.names)
    assert not any(keyword.iskeyword(n) for n in pool.names)
    assert "class" not in pool.names and "schema" not in pool.names


def test_choices_follow_the_seed() -> None:
    pool = word_pool()
    first = [pool.name(random.Random(3), set()) for _ in range(5)]
    assert first == [pool.name(random.Random(3), set()) for _ in range(5)]
    taken: set[str] = set()
    rng = random.Random(4)
    names = [pool.name(rng, taken) for _ in range(50)]
    assert len(set(names)) == 50


def test_text_lengths() -> None:
    pool = word_pool()
    rng = random.Random(0)
    for low, high in [(0, 0), (1, 3), (5, 40), (30, 30)]:
        text = pool.text(rng, low, high)
        assert low <= len(text) <= high


def test_lorem_text_is_the_pools_text_without_the_pool() -> None:
    """The oracle's strings (``conformbench validate``'s satisfiability check
    among them) read lorem's words alone: the same text for the same seed."""
    pool = word_pool()
    for seed, (low, high) in enumerate([(0, 5), (3, 40), (10, 10), (1, 200)]):
        assert lorem_text(random.Random(seed), low, high) == pool.text(random.Random(seed), low, high)
