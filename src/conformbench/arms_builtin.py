"""The built-in arms: four one-answer arms (validbutwrong's design) and three
loops people ship instead of a grammar: repair (re-ask with the validator's
errors, as Instructor's ``max_retries``), resample (ask again) and fallback
(the grammar only when the free answer fails)."""

from __future__ import annotations

from collections.abc import Sequence

from conformbench.arms import Arm, ArmContext, arms, policy
from conformbench.records.rounds import TurnOutcome, TurnPlan, Verdict

__all__ = [
    "FEEDBACK_ERRORS",
    "FEEDBACK_MESSAGE_CHARS",
    "RESAMPLE_SEED_STEP",
    "RESAMPLE_TEMPERATURE",
    "feedback_request",
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


def _reason_then_constrain(ctx: ArmContext, turns: Sequence[TurnOutcome]) -> TurnPlan | None:
    """A free reasoning step (the unconstrained arm's turn, so a run with
    both generates it once), then the packaging turn under the grammar."""
    if not turns:
        return ctx.free(step=True)
    return ctx.package(turns[0].text) if len(turns) == 1 else None


for _arm in (
    Arm("unconstrained", uses_contract=False, constrained=False,
        description="free text, answer extracted"),
    Arm("prompt_only", uses_contract=True, constrained=False,
        description="the JSON contract S asked for in the prompt, no grammar"),
    Arm("constrained", uses_contract=True, constrained=True, grammar_twin="prompt_only",
        description="the same prompt as prompt_only[S] with the grammar on"),
    Arm("reason_then_constrain", uses_contract=True, constrained=True, packages=True, one_call=False,
        next_turn=_reason_then_constrain,
        description="reason freely, then a constrained packaging turn"),
):
    arms.register(_arm.name)(_arm)


def _format_name(ctx: ArmContext) -> str:
    return (ctx.condition.output_format or "json").upper()


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


def _again(turns: Sequence[TurnOutcome], ctx: ArmContext) -> bool:
    """Another round: the last answer failed and rounds are left."""
    return turns[-1].invalid and len(turns) < ctx.max_rounds


@policy("repair", description="prompt_only[S] first; while invalid, re-ask quoting the validator's errors "
        "(earlier turns kept)", compare_with=("prompt_only", "constrained"))
def repair(ctx: ArmContext, turns: Sequence[TurnOutcome]) -> TurnPlan | None:
    if not turns:
        return ctx.ask()
    if not _again(turns, ctx):
        return None
    last = turns[-1]
    return last.plan.followed_by(last.text, feedback_request(last.verdict, _format_name(ctx)))


@policy("resample", description="prompt_only[S] again with a new seed while invalid (at temperature "
        f"{RESAMPLE_TEMPERATURE} when the run is greedy)", compare_with=("prompt_only", "constrained"))
def resample(ctx: ArmContext, turns: Sequence[TurnOutcome]) -> TurnPlan | None:
    if not turns:
        return ctx.ask()
    if not _again(turns, ctx):
        return None
    temperature = ctx.temperature if ctx.temperature > 0 else RESAMPLE_TEMPERATURE
    return ctx.ask().resampled(temperature, RESAMPLE_SEED_STEP * len(turns))


@policy("fallback", constrained=True, description="prompt_only[S] first; if invalid, constrained[S]'s turn",
        compare_with=("prompt_only", "constrained"))
def fallback(ctx: ArmContext, turns: Sequence[TurnOutcome]) -> TurnPlan | None:
    if not turns:
        return ctx.ask()
    if len(turns) == 1 and turns[0].invalid and ctx.max_rounds > 1:
        return ctx.ask(grammar=True)
    return None
