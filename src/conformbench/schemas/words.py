"""Word sources for generated schemas: property names from wonderwords'
bundled English lists, text values from lorem's Latin word list.

Only the packaged word files are read (in file order) and every choice goes
through the caller's seeded ``random.Random``: the libraries' own random
helpers use the global RNG and would break byte-identical rebuilds.
"""

from __future__ import annotations

import builtins
import keyword
import random
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

__all__ = ["WordPool", "lorem_text", "lorem_words", "word_pool"]

#: names that make poor Python identifiers in the Pydantic rendering
_RESERVED = frozenset(
    {"schema", "json", "dict", "copy", "fields", "construct", "validate", "self", "cls"}
)


@dataclass(frozen=True)
class WordPool:
    names: tuple[str, ...]
    lorem: tuple[str, ...]

    def name(self, rng: random.Random, taken: set[str]) -> str:
        """A property name not in ``taken`` (which it is added to)."""
        for _ in range(1000):
            word = rng.choice(self.names)
            if word not in taken:
                taken.add(word)
                return word
        raise RuntimeError("word list exhausted")

    def text(self, rng: random.Random, low: int, high: int) -> str:
        """Lorem words whose joined length lies in [low, high] (high >= low)."""
        return _text(self.lorem, rng, low, high)


def _text(lorem: tuple[str, ...], rng: random.Random, low: int, high: int) -> str:
    target = rng.randint(low, high)
    words: list[str] = []
    while len(" ".join(words)) < target:
        words.append(rng.choice(lorem))
    out = " ".join(words)[:target].rstrip()
    return out if len(out) >= low else out.ljust(low, "a")


@lru_cache(maxsize=1)
def lorem_words() -> tuple[str, ...]:
    """lorem's Latin word list, in its order."""
    from lorem.data import WORDS  # a fixed list; lorem's functions use the global RNG

    return tuple(str(w) for w in WORDS)


def lorem_text(rng: random.Random, low: int, high: int) -> str:
    """``word_pool().text``, without building the pool's names (a tenth of a
    second): what the oracle's strings need, ``conformbench validate`` among them."""
    return _text(lorem_words(), rng, low, high)


def _lines(package: str, resource: str) -> list[str]:
    text = resources.files(package).joinpath(resource).read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip()]


@lru_cache(maxsize=1)
def word_pool() -> WordPool:
    """Lower-case ASCII nouns and adjectives, 3 to 12 letters, no profanity,
    no Python keywords or builtins (so renderings need no aliases)."""
    banned = set(_lines("wonderwords", "assets/profanitylist.txt"))
    names: list[str] = []
    seen: set[str] = set()
    for resource in ("assets/nounlist.txt", "assets/adjectivelist.txt"):
        for word in _lines("wonderwords", resource):
            if (
                word.isascii() and word.isalpha() and word.islower()
                and 3 <= len(word) <= 12
                and word not in banned and word not in seen
                and not keyword.iskeyword(word) and not keyword.issoftkeyword(word)
                and not hasattr(builtins, word) and word not in _RESERVED
            ):
                seen.add(word)
                names.append(word)
    return WordPool(tuple(names), lorem_words())
