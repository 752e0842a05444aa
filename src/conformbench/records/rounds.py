"""The records an arm's policy reads and writes (``conformbench.arms``): the
turn it asks for next (``TurnPlan``), the turns so far (``TurnOutcome``:
text, finish reason and verdict) and a verdict (``Verdict``: validity and
the validator's errors, never the gold answer: a policy may not peek at
accuracy)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Literal

from conformbench.records.generation import Turn
from conformbench.records.prompt import Message, Prompt
from conformbench.records.stored_text import answer_chars

__all__ = ["ANSWER_EXCERPT_CHARS", "ErrorNote", "TurnKind", "TurnOutcome", "TurnPlan", "Verdict", "answer_excerpt"]

#: characters kept of each end of an earlier answer quoted in a later
#: round's prompt (``TurnPlan.followed_by``): a later round's prompt holds
#: at most this twice per earlier round, so an arm's rounds store each
#: answer once in full (its own record's text) and a replay grows linearly
#: with the rounds, whatever an answer's length (docs/guarantees.md)
ANSWER_EXCERPT_CHARS = 2000


def answer_excerpt(text: str, keep: int = ANSWER_EXCERPT_CHARS) -> str:
    """``text`` as a later round quotes it: whole up to ``2 * keep``
    characters, else its first and last ``keep`` with a marker saying how
    many were cut between them. An answer a replay stored cut (``CutText``,
    which keeps more of each end) gives the excerpt its whole answer gave."""
    chars = answer_chars(text)
    if chars <= 2 * keep:
        return text
    return f"{text[:keep]}\n[... {chars - 2 * keep} characters cut ...]\n{text[-keep:]}"


@dataclass(frozen=True)
class ErrorNote:
    """One thing wrong with an answer, as the scoring validator says it: the
    failing instance path (JSON Pointer, '' for the root), the keyword
    ('parse' when the text is not a document of the format at all) and the
    validator's message."""

    instance_path: str
    keyword: str
    message: str


@dataclass(frozen=True)
class Verdict:
    """What the scorer says of an answer, without the gold answer: valid
    (None where the turn answers no contract) and the errors behind an
    invalid answer, in the validator's order."""

    valid: bool | None
    errors: tuple[ErrorNote, ...] = ()


#: which turn a plan is, and so which of the task's prompts it asks: "free"
#: (the free prompt, no contract), "ask" (the contract S asked for in the
#: prompt), "constrained" (the same prompt under the grammar), "package"
#: (reason_then_constrain's packaging turn), "think" (think_then_constrain's
#: one call), "feedback" (an earlier turn followed by a re-ask: ``followed_by``),
#: "tools" (the question alone, the item's functions offered through the
#: server's ``tools`` API: a tools arm's one call)
TurnKind = Literal["free", "ask", "constrained", "package", "think", "feedback", "tools"]


@dataclass(frozen=True)
class TurnPlan:
    """The next model call a policy asks for. Build one with the context's
    ``free``, ``ask``, ``package`` or ``think`` and change it with
    ``followed_by`` or ``resampled``; the runner turns it into a request
    (the run's decoding settings, the turn's budget, stops and seed)."""

    prompt: Prompt
    #: which turn this is (see ``TurnKind``)
    kind: TurnKind = "ask"
    #: apply the condition's grammar (its engine, the contract S)
    grammar: bool = False
    #: which token budget the turn spends
    budget: Turn = "json"
    #: stop strings of the task for this kind of turn
    stop: tuple[str, ...] = ()
    #: an answer of the arm (recorded as one of its rounds, scored); False:
    #: a step whose text the next answer carries (reason_then_constrain's
    #: free turn, recorded as that answer's ``free_text``)
    answer: bool = True
    #: sampling temperature (None: the run's)
    temperature: float | None = None
    #: added to the run's seed (and the sample's): a resampled round's own seed
    seed_offset: int = 0
    #: free text before the answer in the same call, up to the run's think
    #: stop string (think_then_constrain); the grammar applies after it
    think: bool = False
    #: offer the item's functions through the ``tools`` API in the
    #: condition's mode (a tools arm's turn; ``records.tool_calls``)
    tools: bool = False

    def followed_by(self, answer: str, request: str) -> TurnPlan:
        """The same turn one exchange later: the earlier answer as an
        assistant message (its ``answer_excerpt``), then ``request`` as a
        user message (the earlier turns kept, as Instructor and magentic
        re-ask)."""
        said = self.prompt.assistant_prefix + answer_excerpt(answer)
        messages = (*self.prompt.messages, Message("assistant", said), Message("user", request))
        return replace(self, prompt=Prompt(messages, self.prompt.assistant_prefix), kind="feedback")

    def resampled(self, temperature: float, seed_offset: int) -> TurnPlan:
        """The same turn sampled at ``temperature`` with its own seed."""
        return replace(self, temperature=temperature, seed_offset=seed_offset)


@dataclass(frozen=True)
class TurnOutcome:
    """A turn taken: what was asked, the text, why it ended and (read on
    first use: scoring a text costs) the verdict on it."""

    plan: TurnPlan
    text: str
    finish_reason: str
    judge: Callable[[], Verdict] = field(repr=False, compare=False)

    @cached_property
    def verdict(self) -> Verdict:
        return self.judge()

    @property
    def invalid(self) -> bool:
        """Answered the contract and failed it (cut or unparsable included)."""
        return self.verdict.valid is False
