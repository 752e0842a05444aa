"""The bookkeeping of beam search, apart from llama.cpp: the kept
hypotheses, which candidates of a step finish or run on, and when the
search stops. Pure Python, so a hand-built case can test each rule.

Two stop rules, named (``STOP_RULES``) and recorded in the run metadata:

* ``transformers`` (the default): the installed transformers' (>= 4.50,
  5.x) ``generate(num_beams=N)``, read in ``_beam_search``,
  ``_update_finished_beams`` and ``_check_early_stop_heuristic`` of
  ``transformers/generation/utils.py``. A candidate that hits a stopping
  criterion (an end-of-generation token, and here also a stop string, the
  loop stop or the budget) finishes a hypothesis if it ranks among the first
  N candidates of the step, and never runs on; the running beams are the N
  best candidates that hit none. The search ends when N hypotheses are kept
  and the best *running* beam's score over its length cannot beat the worst
  kept one.
* ``beam-search-scorer``: the old ``BeamSearchScorer`` (transformers 4.x,
  the ConCodeEval paper's era): only end tokens among the first N candidates
  finish a hypothesis, the running beams are the N best candidates that are
  not end tokens (a stop string, the loop stop or the budget then ends such
  a beam as a hypothesis), and the search ends when the worst kept
  hypothesis beats the best *candidate* of the step, finished ones included.

Since a finished candidate can outscore every running beam, the second rule
searches on where the first has stopped, and the two can return different
answers (on 36 ConCodeEval items, 5 differed).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conformbench.backends.llamacpp.host import Finish

__all__ = ["DEFAULT_STOP_RULE", "STOP_RULES", "Candidate", "Hypotheses", "split_step", "stop_now"]

#: (beam index, token, summed log-probability of the beam with the token)
Candidate = tuple[int, int, float]

STOP_RULES: dict[str, str] = {
    "transformers": "transformers >= 4.50 generate(num_beams=N): stop when the best running beam "
                    "cannot beat the worst kept hypothesis",
    "beam-search-scorer": "transformers 4.x BeamSearchScorer: stop when the worst kept hypothesis "
                          "beats the best candidate of the step, finished ones included",
}
DEFAULT_STOP_RULE = "transformers"


@dataclass(order=True)
class Hypothesis:
    score: float
    tokens: list[int] = field(compare=False)
    finish: Finish = field(compare=False)


class Hypotheses:
    """The N best finished sequences (length_penalty 1.0, early_stopping
    False), scored ``sum of log-probabilities / generated length``."""

    def __init__(self, beams: int) -> None:
        self.beams = beams
        self.kept: list[Hypothesis] = []
        self.worst = 1e9

    def add(self, tokens: list[int], sum_logprobs: float, generated_len: int, finish: Finish) -> None:
        score = sum_logprobs / max(generated_len, 1)
        if len(self.kept) < self.beams or score > self.worst:
            self.kept.append(Hypothesis(score, tokens, finish))
            if len(self.kept) > self.beams:
                # the worst goes (of equal scores, the first kept), as HF's sorted (score, index)
                ranked = sorted(range(len(self.kept)), key=lambda i: self.kept[i].score)
                self.worst = self.kept[ranked[1]].score
                del self.kept[ranked[0]]
            else:
                self.worst = min(score, self.worst)

    def is_done(self, best_sum_logprobs: float, cur_len: int) -> bool:
        """N are kept and ``best_sum_logprobs`` over ``cur_len`` cannot beat the worst."""
        if len(self.kept) < self.beams:
            return False
        return self.worst >= best_sum_logprobs / cur_len

    def best(self) -> Hypothesis | None:
        # of equal scores the last kept wins, as HF's stable sort then pop()
        return max(reversed(self.kept), default=None, key=lambda h: h.score)


def stop_now(rule: str, hyps: Hypotheses, cands: list[Candidate], running: list[Candidate],
             cur_len: int) -> bool:
    """Whether the search ends after a step whose candidates (best first)
    were ``cands`` and whose new running beams (best first) are ``running``;
    ``cur_len`` is the generated length of the step's beams."""
    if rule == "beam-search-scorer":
        return bool(cands) and hyps.is_done(cands[0][2], cur_len)
    if not running:
        return True
    # _check_early_stop_heuristic: improvement is possible while some kept
    # slot is empty or the best running score / length > the worst kept
    return hyps.is_done(running[0][2], cur_len)


def split_step(rule: str, cands: list[Candidate], beams: int, is_end: Callable[[int], bool],
               hit: Callable[[Candidate], Finish | None]) -> tuple[list[tuple[Candidate, Finish]], list[Candidate]]:
    """(the candidates that finish a hypothesis, with their finish reason;
    the next running beams) of one step. ``is_end(token)``: an end of
    generation; ``hit(candidate)``: the stop rule (stop string, loop,
    budget) the candidate's sequence meets, or None. Under
    ``beam-search-scorer`` only end tokens finish here (the stop rules end
    running beams later, as that scorer's stopping criteria did)."""
    finished: list[tuple[Candidate, Finish]] = []
    running: list[Candidate] = []
    for rank, cand in enumerate(cands):
        if len(running) == beams and rank >= beams:
            break
        why: Finish | None = "stop" if is_end(cand[1]) else None
        if why is None and rule == "transformers" and (rank < beams or len(running) < beams):
            why = hit(cand)
        if why is not None:
            if rank < beams:
                finished.append((cand, why))
        elif len(running) < beams:
            running.append(cand)
    return finished, running
