"""The four built-in arms (see validbutwrong's design)."""

from __future__ import annotations

from conformbench.arms import Arm, arms

for _arm in (
    Arm("unconstrained", uses_contract=False, constrained=False,
        description="free text, answer extracted"),
    Arm("prompt_only", uses_contract=True, constrained=False,
        description="the JSON contract S asked for in the prompt, no grammar"),
    Arm("constrained", uses_contract=True, constrained=True,
        description="the same prompt as prompt_only[S] with the grammar on"),
    Arm("reason_then_constrain", uses_contract=True, constrained=True, two_turn=True,
        description="reason freely, then a constrained packaging turn"),
):
    arms.register(_arm.name)(_arm)
