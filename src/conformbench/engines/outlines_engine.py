"""outlines-core: the JSON Schema becomes one regular expression, the regex an
index from automaton states to allowed tokens over the model's vocabulary.

Only outlines-core is needed (outlines 1.x itself is not). Regexes cannot
express numeric bounds, so those are dropped silently; long string length
bounds make the index slow to build.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from conformbench.engines.base import DecodeHooks, Engine, LlamaRuntime, engines
from conformbench.engines.masking import MaskProcessor
from conformbench.jsontypes import Schema

__all__ = ["OutlinesEngine"]


class _Matcher:
    def __init__(self, guide: Any) -> None:
        self._guide = guide

    def advance(self, tokens: list[int]) -> None:
        for tok in tokens:
            self._guide.advance(tok, return_tokens=False)

    def fill_bitmask(self, bitmask: npt.NDArray[np.int32]) -> None:
        self._guide.write_mask_into(bitmask.ctypes.data, bitmask.size, bitmask.itemsize)


def _vocabulary(runtime: LlamaRuntime) -> Any:
    """outlines-core's Vocabulary: bytes -> token ids, without EOS and control
    tokens (the Index adds EOS where the regex may end)."""
    from outlines_core import Vocabulary

    pieces: dict[bytes, list[int]] = {}
    for tok, piece in enumerate(runtime.token_pieces):
        if piece and tok != runtime.eos:
            pieces.setdefault(piece, []).append(tok)
    return Vocabulary(runtime.eos, pieces)


@engines.register("outlines")
class OutlinesEngine(Engine):
    name = "outlines"
    distribution = "outlines-core"
    module = "outlines_core"

    def _build(
        self, schema: Schema, text: str, runtime: LlamaRuntime
    ) -> tuple[str, Callable[[int], DecodeHooks]]:
        from outlines_core import Guide, Index
        from outlines_core.json_schema import build_regex_from_schema

        vocabulary = runtime.memo("outlines.vocabulary", lambda: _vocabulary(runtime))
        try:
            regex = build_regex_from_schema(text)
            index = Index(regex, vocabulary)
        except (ValueError, TypeError) as exc:
            raise self.unsupported(exc) from None
        stop_ids = frozenset({runtime.eos})

        def start(prompt_tokens: int) -> DecodeHooks:
            return DecodeHooks(
                processor=MaskProcessor(_Matcher(Guide(index)), prompt_tokens, stop_ids)
            )

        return regex, start
