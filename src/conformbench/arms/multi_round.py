"""The loops people ship instead of a grammar, as policy factories: repair
(re-ask with the validator's errors, as Instructor's ``max_retries``),
resample (ask again) and fallback (the grammar only when the free answer
fails). Each factory's arguments are recorded with the arm (``Recipe``);
the built-in arms are the factories called with their defaults.

A repair with other wording is a function of the verdict and the answer's
format name under one decorator (``policy("repair_terse")(repair(feedback=
terse, max_rounds=2))`` says the same)::

    @repair_wording("repair_terse", description="repair, re-asked tersely", max_rounds=2)
    def terse(verdict: Verdict, format_name: str) -> str:
        return f"Not valid. Reply with only the {format_name}."
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from conformbench.arms.base import ArmContext, MadePolicy, made, policy
from conformbench.records.rounds import TurnOutcome, TurnPlan, Verdict

__all__ = [
    "FEEDBACK_ERRORS",
    "FEEDBACK_MESSAGE_CHARS",
    "RESAMPLE_SEED_STEP",
    "RESAMPLE_TEMPERATURE",
    "Feedback",
    "fallback",
    "feedback_request",
    "repair",
    "repair_wording",
    "resample",
]

#: errors quoted in one repair turn, and the characters kept of each message
FEEDBACK_ERRORS = 5
FEEDBACK_MESSAGE_CHARS = 200
#: resample's rounds after the first sample at this temperature when the run
#: is greedy (a greedy round would repeat the first answer word for word)...
RESAMPLE_TEMPERATURE = 0.7
#: ...each with its own seed: the sample's seed + RESAMPLE_SEED_STEP x round
#: (a step no run's sample count reaches, so no two requests share a seed)
RESAMPLE_SEED_STEP = 1000

#: a repair's wording: the user turn that re-asks after an invalid answer,
#: from the verdict and the answer's format name ("JSON", "YAML", "XML")
Feedback = Callable[[Verdict, str], str]


def _format_name(ctx: ArmContext) -> str:
    return (ctx.condition.text_axis("output_format") or "json").upper()


def feedback_request(verdict: Verdict, format_name: str = "JSON") -> str:
    """The user turn that re-asks after an invalid answer: the scoring
    validator's errors (instance path, keyword, message), at most
    FEEDBACK_ERRORS of them, each path and message cut to
    FEEDBACK_MESSAGE_CHARS (the answer itself is quoted before it, as an
    excerpt: ``records.rounds.answer_excerpt``)."""
    shown = verdict.errors[:FEEDBACK_ERRORS]
    lines = []
    for error in shown:
        message = error.message if len(error.message) <= FEEDBACK_MESSAGE_CHARS else (
            error.message[:FEEDBACK_MESSAGE_CHARS] + "...")
        where = error.instance_path[:FEEDBACK_MESSAGE_CHARS] or "(root)"
        lines.append(f"- at {where}: {error.keyword}: {message}")
    if len(verdict.errors) > len(shown):
        lines.append(f"- and {len(verdict.errors) - len(shown)} more")
    if not lines:  # cut at the budget with nothing else to say
        lines.append("- (root): the answer is incomplete")
    return (f"Your answer is not valid. The validator reports:\n{chr(10).join(lines)}\n"
            f"Reply with only the corrected {format_name}.")


def _rounds(ctx: ArmContext, max_rounds: int | None) -> int:
    """Answers the arm gives at most: the run's ``--max-rounds``, or the
    arm's own limit where that is lower."""
    return ctx.max_rounds if max_rounds is None else min(ctx.max_rounds, max_rounds)


def _again(turns: Sequence[TurnOutcome], ctx: ArmContext, max_rounds: int | None) -> bool:
    """Another round: the last answer failed and rounds are left."""
    return turns[-1].invalid and len(turns) < _rounds(ctx, max_rounds)


def _positive(max_rounds: int | None) -> None:
    if max_rounds is not None and max_rounds < 1:
        raise ValueError(f"max_rounds must be 1 or more, not {max_rounds}")


def repair(*, feedback: Feedback | None = None, max_rounds: int | None = None) -> MadePolicy:
    """prompt_only[S] first; while invalid, re-ask with ``feedback``'s words
    (default ``feedback_request``: the validator's errors), earlier turns
    kept; at most ``max_rounds`` answers (None: the run's ``--max-rounds``)."""
    _positive(max_rounds)
    words = feedback or feedback_request

    def decide(ctx: ArmContext, turns: Sequence[TurnOutcome]) -> TurnPlan | None:
        if not turns:
            return ctx.ask()
        if not _again(turns, ctx, max_rounds):
            return None
        last = turns[-1]
        return last.plan.followed_by(last.text, words(last.verdict, _format_name(ctx)))

    return made("repair", decide, feedback=feedback, max_rounds=max_rounds)


def resample(*, temperature: float | None = None, max_rounds: int | None = None) -> MadePolicy:
    """prompt_only[S] again with a new seed while invalid, at the run's
    temperature, or at ``temperature`` (default RESAMPLE_TEMPERATURE) when
    the run is greedy."""
    _positive(max_rounds)
    hot = RESAMPLE_TEMPERATURE if temperature is None else temperature

    def decide(ctx: ArmContext, turns: Sequence[TurnOutcome]) -> TurnPlan | None:
        if not turns:
            return ctx.ask()
        if not _again(turns, ctx, max_rounds):
            return None
        return ctx.ask().resampled(ctx.temperature if ctx.temperature > 0 else hot, RESAMPLE_SEED_STEP * len(turns))

    return made("resample", decide, temperature=temperature, max_rounds=max_rounds)


def fallback() -> MadePolicy:
    """prompt_only[S] first; if invalid (and the run allows a second
    round), constrained[S]'s turn."""

    def decide(ctx: ArmContext, turns: Sequence[TurnOutcome]) -> TurnPlan | None:
        if not turns:
            return ctx.ask()
        if len(turns) == 1 and turns[0].invalid and ctx.max_rounds > 1:
            return ctx.ask(grammar=True)
        return None

    return made("fallback", decide)


def repair_wording(name: str, *, description: str = "", max_rounds: int | None = None,
                   compare_with: tuple[str, ...] = ("repair", "prompt_only", "constrained"),
                   ) -> Callable[[Feedback], Feedback]:
    """Register arm ``name``: ``repair`` re-asking in the decorated
    function's words (compared, on the same items, with the built-in repair
    and the one-answer arms)."""

    def register(words: Feedback) -> Feedback:
        doc = (words.__doc__ or "").strip().split("\n")[0]
        policy(name, description=description or doc or f"repair in the words of {words.__name__}",
               compare_with=compare_with)(repair(feedback=words, max_rounds=max_rounds))
        return words

    return register


policy("repair", description="prompt_only[S] first; while invalid, re-ask quoting the validator's errors "
       "(earlier turns kept)", compare_with=("prompt_only", "constrained"))(repair())
policy("resample", description="prompt_only[S] again with a new seed while invalid (at temperature "
       f"{RESAMPLE_TEMPERATURE} when the run is greedy)", compare_with=("prompt_only", "constrained"))(resample())
policy("fallback", constrained=True, description="prompt_only[S] first; if invalid, constrained[S]'s turn",
       compare_with=("prompt_only", "constrained"))(fallback())
