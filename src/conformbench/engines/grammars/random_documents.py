"""Documents drawn from a grammar without a model: a random walk over the
tokens an llguidance matcher allows.

Each step takes a random allowed token, half of the time one of the short
tokens that carry structure (quotes, brackets, line breaks, tag marks), so
strings and lists end in a few dozen steps; once the matcher may stop, it
stops with probability ``stop``. Used to check that whatever a grammar
accepts parses with our strict readers (and validates, but for the
keywords it leaves to the validator).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from conformbench.engines.grammars.matcher import ModelVocabulary

__all__ = ["Walk", "random_walk"]

_STRUCTURE = set(b"\"'\n<>/[]{}:-,@")


@dataclass(frozen=True)
class Walk:
    text: str
    tokens: tuple[int, ...]
    #: True when the matcher allowed the walk to stop (a whole document)
    finished: bool


_STRUCTURAL: dict[int, npt.NDArray[np.bool_]] = {}


def _structural(vocab: ModelVocabulary) -> npt.NDArray[np.bool_]:
    """Tokens of at most two bytes with a structural character (per vocabulary)."""
    if id(vocab.llg) not in _STRUCTURAL:
        out = np.zeros(vocab.llg.vocab_size, dtype=bool)
        for token in range(vocab.llg.vocab_size):
            piece = vocab.llg.decode_bytes([token])
            out[token] = 0 < len(piece) <= 2 and any(b in _STRUCTURE for b in piece)
        _STRUCTURAL[id(vocab.llg)] = out
    return _STRUCTURAL[id(vocab.llg)]


def _allowed(matcher: Any, size: int) -> npt.NDArray[np.bool_]:
    mask = np.frombuffer(matcher.compute_bitmask(), dtype=np.uint8)
    return np.unpackbits(mask, bitorder="little")[:size].astype(bool)


def random_walk(
    matcher: Any, vocab: ModelVocabulary, rng: random.Random, max_tokens: int = 400, stop: float = 0.5
) -> Walk:
    """One random document of the matcher's grammar (the matcher is used up)."""
    structural = _structural(vocab)
    size = vocab.llg.vocab_size
    tokens: list[int] = []
    for _ in range(max_tokens):
        allowed = _allowed(matcher, size)
        can_stop = bool(allowed[vocab.eos])
        allowed[vocab.eos] = False
        if can_stop and (rng.random() < stop or not allowed.any()):
            return Walk(vocab.decode(tokens), tuple(tokens), True)
        preferred = allowed & structural
        pool = np.flatnonzero(preferred if preferred.any() and rng.random() < 0.5 else allowed)
        if len(pool) == 0:
            break
        token = int(pool[rng.randrange(len(pool))])
        if not matcher.consume_token(token):
            raise RuntimeError(f"the matcher refused token {token} it had allowed: {matcher.get_error()}")
        tokens.append(token)
    return Walk(vocab.decode(tokens), tuple(tokens), False)
