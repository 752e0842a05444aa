"""Decoding arms. An arm says whether the prompt carries a JSON contract,
whether a grammar is applied and whether there is a free reasoning turn
first. The grammar is the only difference between prompt_only[S] and
constrained[S]."""

from __future__ import annotations

from dataclasses import dataclass

from conformbench.registry import Registry

__all__ = ["Arm", "arms"]


@dataclass(frozen=True)
class Arm:
    name: str
    uses_contract: bool
    constrained: bool
    #: free-text turn first (the 'unconstrained' generation of the same item
    #: is reused), then a constrained packaging turn
    two_turn: bool = False
    description: str = ""


arms: Registry[Arm] = Registry("arm", {
    name: "conformbench.arms_builtin"
    for name in ("unconstrained", "prompt_only", "constrained", "reason_then_constrain")
})
