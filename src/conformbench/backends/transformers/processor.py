"""Constraints and stop rules inside Hugging Face ``generate``.

``generate`` calls a logits processor with every running sequence (prompt
and generated tokens, one row each: one row for greedy decoding and
sampling, N or more for beam search, where rows are reordered, copied and
dropped between steps) and that step's scores. So the constraint state is
keyed by the generated prefix, not by the row: each prefix of a step is
reached from its parent prefix of the step before, by moving the parent's
matcher forward in place (its last child) or by a copy of it (the other
children: ``fork()`` where the engine has one, llguidance's ``deep_copy``;
otherwise a fresh matcher fed the parent's tokens, outlines and xgrammar),
and the states of prefixes no row holds any more are dropped. xgrammar's own
``contrib.hf`` processor ties matchers to batch rows and fails under beams;
this one does not.

A prefix the engine refuses (beam search can keep a candidate whose token
the mask set to -inf when fewer tokens are allowed than candidates are
kept) is *dead*: every next token is refused for it, so its score stays
-inf and it never wins. If every row is dead, or the engine raises, masking
has failed: the error is recorded, only end-of-generation tokens are
allowed, and the backend reports an error result naming the engine (as the
llama.cpp mask processor does: an exception never escapes into generate).

With ``measure`` (one row: greedy decoding or sampling) it also measures
what the mask took from the model at each step (``engines.toll_meter``)
from the scores it is handed: generate gives a processor passed in
``logits_processor`` the raw logits but for the processors the checkpoint's
generation config asks for (a repetition penalty, a minimum length...),
and applies temperature and the samplers after it.

The bitmask is unpacked with numpy (``engines.masking.unpack_bitmask``), not
with llguidance's torch helper, whose first call spends ~20 s compiling.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from conformbench.backends.loops import loop_check_due, loop_period
from conformbench.engines.masking import TokenMatcher, unpack_bitmask
from conformbench.engines.toll_meter import TollMeter

if TYPE_CHECKING:
    from conformbench.records.generation import DecodingSettings

__all__ = ["Finish", "PrefixMasks", "StopRules", "stop_at"]

Prefix = tuple[int, ...]
#: why a decode ended (the llamacpp backend's, "error" aside)
Finish = Literal["stop", "length", "loop"]


def stop_at(text: str, stops: tuple[str, ...]) -> int | None:
    """Index of the earliest stop string in ``text``, or None."""
    hits = [i for i in (text.find(s) for s in stops if s) if i >= 0]
    return min(hits) if hits else None


class PrefixMasks:
    """A logits processor (``(input_ids, scores) -> scores``) for one
    generation, its constraint state keyed by each row's generated prefix."""

    def __init__(self, fresh: Callable[[], TokenMatcher], prompt_len: int, n_logits: int,
                 stop_ids: frozenset[int], measure: bool = False) -> None:
        self._fresh = fresh
        self._prompt_len = prompt_len
        self._n = n_logits
        self._bitmask = np.zeros((1, (n_logits + 31) // 32), dtype=np.int32)
        self._stop_ids = sorted(stop_ids)
        self._states: dict[Prefix, TokenMatcher] = {}
        #: prefixes the engine refused (their rows get no allowed token)
        self.dead: set[Prefix] = set()
        self._refusal = ""
        #: why masking stopped working (the generation is then an error)
        self.error: str | None = None
        self.steps = 0
        #: what the mask took from the model at each step (one row only:
        #: greedy decoding and sampling, not beam search)
        self.toll = TollMeter() if measure else None

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        if self.error is None:
            try:
                return self._mask(input_ids, scores)
            except Exception as exc:  # noqa: BLE001 - recorded and reported as an error result
                self.error = f"{type(exc).__name__}: {exc}"
        return self._only_stop(scores)

    def _mask(self, input_ids: Any, scores: Any) -> Any:
        import torch

        prefixes = [tuple(row) for row in input_ids[:, self._prompt_len:].tolist()]
        states = self._advance(prefixes)
        masks: dict[Prefix, npt.NDArray[np.bool_]] = {}
        allowed = np.zeros((len(prefixes), scores.shape[-1]), dtype=bool)
        for row, prefix in enumerate(prefixes):
            matcher = states.get(prefix)
            if matcher is None:
                continue  # dead: nothing allowed
            if prefix not in masks:
                self._bitmask.fill(0)
                matcher.fill_bitmask(self._bitmask)
                masks[prefix] = unpack_bitmask(self._bitmask, self._n)
            allowed[row, : self._n] = masks[prefix]
        if not allowed.any():
            raise ValueError(self._refusal or "the engine allows no next token")
        self.steps += 1
        if self.toll is not None and len(prefixes) == 1:
            self.toll.observe(scores[0].detach().float().cpu().numpy(), allowed[0], len(prefixes[0]))
        keep = torch.from_numpy(allowed).to(scores.device)
        return scores.masked_fill(~keep, float("-inf"))

    def _advance(self, prefixes: list[Prefix]) -> dict[Prefix, TokenMatcher]:
        """The state of each wanted prefix, from its parent's state."""
        wanted = list(dict.fromkeys(prefixes))
        children = Counter(p[:-1] for p in wanted if p and p not in self._states)
        states: dict[Prefix, TokenMatcher] = {}
        for prefix in wanted:
            if prefix in self._states:
                states[prefix] = self._states[prefix]
                continue
            if not prefix:
                states[prefix] = self._fresh()
                continue
            parent = prefix[:-1]
            children[parent] -= 1
            if parent in self.dead:
                self.dead.add(prefix)
                continue
            matcher = self._child(parent, last=children[parent] == 0)
            try:
                matcher.advance([prefix[-1]])
            except ValueError as exc:
                self.dead.add(prefix)
                self._refusal = (str(exc).strip().splitlines() or ["refused"])[0]  # llguidance adds its state
                continue
            states[prefix] = matcher
        self._states = states
        return states

    def _child(self, parent: Prefix, last: bool) -> TokenMatcher:
        """The parent's state for one child: the state itself for its last
        child, a copy for the others (a replay where nothing was kept)."""
        source = self._states.get(parent)
        if source is not None and last:
            return source
        copied = source.fork() if source is not None else None
        if copied is not None:
            return copied
        rebuilt = self._fresh()
        if parent:
            rebuilt.advance(list(parent))
        return rebuilt

    def matcher_after(self, tokens: list[int]) -> TokenMatcher | None:
        """The state kept for the longest prefix of ``tokens`` (an output:
        its last token is never masked after), or None."""
        for end in range(len(tokens), -1, -1):
            state = self._states.get(tuple(tokens[:end]))
            if state is not None:
                return state
        return None

    def accepted(self, tokens: list[int]) -> bool:
        """Whether ``tokens`` (an output) never took a refused token."""
        return not any(tuple(tokens[:i]) in self.dead for i in range(1, len(tokens) + 1))

    def _only_stop(self, scores: Any) -> Any:
        out = scores.new_full(scores.shape, float("-inf"))
        ids = [i for i in self._stop_ids if i < scores.shape[-1]]
        out[:, ids] = 0.0
        return out


class StopRules:
    """A stopping criterion (``(input_ids, scores) -> bool per row``) with
    the llama.cpp backend's rules: a stop string, then the loop stop (on its
    cadence and on the budget's last token). The budget itself is
    ``max_new_tokens``; end-of-generation tokens are ``generate``'s own
    stop. The reason each ended prefix stopped is kept in ``reasons``."""

    def __init__(self, detok: Callable[[list[int]], str], prompt_len: int, settings: DecodingSettings,
                 budget: int, eog: frozenset[int]) -> None:
        self._detok = detok
        self._prompt_len = prompt_len
        self._settings = settings
        self._budget = budget
        self._eog = eog
        self.reasons: dict[Prefix, Finish] = {}

    def __call__(self, input_ids: Any, scores: Any, **_kwargs: Any) -> Any:
        import torch

        hits: list[bool] = []
        for row in input_ids[:, self._prompt_len:].tolist():
            reason = self.reason(row)
            if reason is not None:
                self.reasons[tuple(row)] = reason
            hits.append(reason is not None)
        return torch.tensor(hits, dtype=torch.bool, device=input_ids.device)

    def reason(self, out: list[int]) -> Finish | None:
        if not out or out[-1] in self._eog:
            return None
        settings = self._settings
        if settings.stop and stop_at(self._detok(out), settings.stop) is not None:
            return "stop"
        if settings.loop_stop and loop_check_due(len(out), self._budget) and loop_period(self._detok(out)):
            return "loop"
        return None
