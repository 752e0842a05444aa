"""Grammar fast-forward for the llamacpp backend (``extra = {fast_forward = true}``).

Under a grammar many tokens are not choices: after ``{"`` the schema may allow
one key only, after a key only ``":``. A mask engine that can tell
(llguidance: the matcher's forced tokens) lets the decoder append those
tokens together, in one ``llama_decode`` with the sampled token before them,
instead of one decode and one masked sampling step each.

This decoder is used for greedy generations under such an engine. Its stop
rules are the plain decoder's, in its order, checked after every appended
token (stop strings, budget, the loop stop at the same multiples of its
check interval), so a forced run is cut exactly where the plain decoder
would cut it. Two things can still make an output differ from the plain
path: the forced tokens are the grammar's canonical tokenization of the
forced text, where the model might have spelt the same text with other
tokens, and tokens evaluated together do not always get bit-identical logits
(see ``backends.llamacpp.continuous_batching``). benchmarks/fast_forward.py measures the
identical-output rate, which is why this is off by default.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from conformbench.records.generation import DecodingSettings

if TYPE_CHECKING:
    from conformbench.backends.llamacpp.host import DecoderHost, Finish
    from conformbench.engines.masking import MaskProcessor

__all__ = ["ForwardCounters", "forward_decode"]

@dataclass
class ForwardCounters:
    #: generations decoded with fast-forward
    generations: int = 0
    #: tokens appended without a sampling step of their own
    forced_tokens: int = 0
    #: llama_decode calls of those generations (sampled steps)
    steps: int = 0


def _logits_reader(llm: Any) -> Callable[[], npt.NDArray[np.single]]:
    """Reads the last evaluated token's logits (resolved once per generation:
    it runs once per sampled token)."""
    import llama_cpp

    get, ctx, shape = llama_cpp.llama_get_logits_ith, llm.ctx, (llm.n_vocab(),)
    pointer = ctypes.POINTER(ctypes.c_float)
    return lambda: np.ctypeslib.as_array(ctypes.cast(get(ctx, -1), pointer), shape=shape)


class _Output:
    """The generated tokens and the plain decoder's stop rules, applied after
    each appended token."""

    def __init__(self, backend: DecoderHost, prompt: list[int], settings: DecodingSettings, budget: int) -> None:
        self.backend = backend
        self.prompt = prompt
        self.settings = settings
        self.budget = budget
        self.tokens: list[int] = []

    def append(self, token: int) -> Finish | None:
        """Add one token; the finish reason when the generation ends here."""
        backend, settings, out = self.backend, self.settings, self.tokens
        if token in backend.vocabulary.eog_ids:
            return "stop"
        out.append(token)
        return backend.end_after(out, self.prompt, settings, self.budget)


def forward_decode(
    backend: DecoderHost, prompt: list[int], settings: DecodingSettings, processor: MaskProcessor,
    budget: int, counters: ForwardCounters,
) -> tuple[list[int], Finish]:
    """Greedy decoding under ``processor`` with forced tokens appended in
    one batch with the token sampled before them."""
    llm = backend.llama
    start = backend.reuse_prefix(prompt)
    llm.eval(prompt[start:])
    logits = _logits_reader(llm)
    # prompt and output so far, written in place (the processor reads a view)
    ids = np.zeros(len(prompt) + budget + 1, dtype=np.intc)
    ids[: len(prompt)] = prompt
    length = len(prompt)
    output = _Output(backend, prompt, settings, budget)
    counters.generations += 1
    while True:
        counters.steps += 1
        token = int(np.argmax(processor(ids[:length], logits())))
        ids[length] = token
        # nothing is forced after the end (and the matcher takes no token past it)
        forced = [] if token in backend.vocabulary.eog_ids else processor.forced_after(ids[: length + 1])
        batch = [token, *forced]
        for index, appended in enumerate(batch):
            finish = output.append(appended)
            if finish is not None:
                counters.forced_tokens += index
                return output.tokens, finish
        counters.forced_tokens += len(batch) - 1
        ids[length : length + len(batch)] = batch
        length += len(batch)
        llm.eval(batch)
