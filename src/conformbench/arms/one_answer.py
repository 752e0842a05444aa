"""The four one-answer arms of validbutwrong's design: unconstrained (free
text), prompt_only[S] (S asked for in the prompt), constrained[S] (the same
prompt under the grammar) and reason_then_constrain[S] (a free reasoning
step, then a packaging turn under the grammar)."""

from __future__ import annotations

from collections.abc import Sequence

from conformbench.arms.base import Arm, ArmContext, arms
from conformbench.records.rounds import TurnOutcome, TurnPlan

__all__: list[str] = []


def _reason_then_constrain(ctx: ArmContext, turns: Sequence[TurnOutcome]) -> TurnPlan | None:
    """A free reasoning step (the unconstrained arm's turn, so a run with
    both generates it once), then the packaging turn under the grammar."""
    if not turns:
        return ctx.free(step=True)
    return ctx.package(turns[0].text) if len(turns) == 1 else None


for _arm in (
    Arm("unconstrained", constrained=False, contracts="none",
        description="free text, answer extracted"),
    Arm("prompt_only", constrained=False,
        description="the JSON contract S asked for in the prompt, no grammar"),
    Arm("constrained", constrained=True, grammar_twin="prompt_only",
        description="the same prompt as prompt_only[S] with the grammar on"),
    Arm("reason_then_constrain", constrained=True, contracts="answer", one_call=False,
        next_turn=_reason_then_constrain,
        description="reason freely, then a constrained packaging turn"),
):
    arms.register(_arm.name)(_arm)
