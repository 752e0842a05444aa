"""The arm interface and its registry. An arm is a policy: from the item
and the turns so far (each turn's text, finish reason and verdict) it
decides the next turn (a ``TurnPlan`` of some ``kind``: the free prompt, the
contract asked, the contract under the grammar, a packaging or thinking
turn, a re-ask) or stops. The runner knows no arm by name: it asks the
policy until it stops, records every answer turn as a round, and generates
a turn identical to another arm's once (repair's first round is
prompt_only's answer).

A policy is a function, or what a factory made of its arguments
(``repair(feedback=..., max_rounds=...)``: a ``MadePolicy`` carries its
``Recipe``, which the replay of a run with an arm conformbench does not
ship records). A user arm is one module with one decorator::

    @policy("ask_twice", description="prompt_only, asked once more when invalid")
    def ask_twice(ctx: ArmContext, turns: Sequence[TurnOutcome]) -> TurnPlan | None:
        if not turns:
            return ctx.ask()
        return ctx.ask() if len(turns) < 2 and turns[-1].invalid else None

The grammar is the only difference between prompt_only[S] and
constrained[S]."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from conformbench.errors import UsageError
from conformbench.jsontypes import JSONValue
from conformbench.records.items import Condition, Item
from conformbench.records.rounds import TurnKind, TurnOutcome, TurnPlan
from conformbench.registry import Registry

__all__ = [
    "Arm",
    "ArmContext",
    "MadePolicy",
    "Policy",
    "Recipe",
    "arms",
    "made",
    "policy",
    "split_arm_spec",
    "turn_condition",
]


class ArmContext(Protocol):
    """What a policy may ask of the run (the runner implements it)."""

    @property
    def item(self) -> Item: ...

    @property
    def condition(self) -> Condition: ...

    @property
    def max_rounds(self) -> int:
        """Answers an arm may give per item, the first included (``--max-rounds``)."""
        ...

    @property
    def temperature(self) -> float:
        """The run's sampling temperature (0: greedy)."""
        ...

    def free(self, step: bool = False) -> TurnPlan:
        """A turn of kind "free": the unconstrained arm's turn (the free
        prompt, no grammar, the free budget); ``step``: a reasoning step,
        not an answer of the arm."""
        ...

    def ask(self, grammar: bool = False) -> TurnPlan:
        """A turn of kind "ask" (prompt_only[S]'s), or with ``grammar`` of
        kind "constrained" (constrained[S]'s)."""
        ...

    def package(self, free_text: str) -> TurnPlan:
        """A turn of kind "package": reason_then_constrain's packaging turn
        after ``free_text``, under the grammar when the arm applies one."""
        ...

    def think(self) -> TurnPlan:
        """A turn of kind "think": think_then_constrain's one turn, free
        text up to the run's think stop string, then the contract under the
        grammar, in one call."""
        ...


#: a policy: the next turn, or None to stop
Policy = Callable[[ArmContext, Sequence[TurnOutcome]], "TurnPlan | None"]


@dataclass(frozen=True)
class Recipe:
    """How an arm's policy was made, as a replay records it: the factory's
    name (``repair``) or a plain function's ``module:qualname``, and the
    arguments the factory was given (a function by its ``module:qualname``)."""

    policy: str
    arguments: tuple[tuple[str, JSONValue], ...] = ()

    def as_json(self) -> dict[str, JSONValue]:
        return {"policy": self.policy, "arguments": dict(self.arguments)}


def _recorded(value: object) -> JSONValue:
    """An argument as the replay records it: a function by its
    ``module:qualname``, plain data as itself."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if callable(value):
        module = getattr(value, "__module__", "?")
        return f"{module}:{getattr(value, '__qualname__', type(value).__qualname__)}"
    raise TypeError(f"a policy argument is plain data or a function, not {type(value).__name__}")


@dataclass(frozen=True)
class MadePolicy:
    """A policy a factory made (``repair(feedback=...)``), with its recipe."""

    recipe: Recipe
    decide: Policy

    def __call__(self, ctx: ArmContext, turns: Sequence[TurnOutcome]) -> TurnPlan | None:
        return self.decide(ctx, turns)


def made(factory: str, decide: Policy, **arguments: object) -> MadePolicy:
    """``decide``, recorded as ``factory`` called with ``arguments`` (those
    left at None are left out: the factory's defaults)."""
    kept = tuple((k, _recorded(v)) for k, v in sorted(arguments.items()) if v is not None)
    return MadePolicy(Recipe(factory, kept), decide)


def _recipe_of(fn: Policy) -> Recipe:
    if isinstance(fn, MadePolicy):
        return fn.recipe
    return Recipe(str(_recorded(fn)))


def _one_turn(ctx: ArmContext, turns: Sequence[TurnOutcome]) -> TurnPlan | None:
    """One answer: the free turn without a contract, else the contract prompt
    (grammar on for an arm that applies one)."""
    if turns:
        return None
    if ctx.condition.contract is None:
        return ctx.free()
    return ctx.ask(grammar=ctx.condition.engine is not None)


@dataclass(frozen=True)
class Arm:
    name: str
    #: answers are checked against a contract S (the condition names one)
    uses_contract: bool
    #: some turn applies a grammar (the arm's conditions name an engine)
    constrained: bool
    description: str = ""
    #: the policy (None: one turn, see ``_one_turn``)
    next_turn: Policy | None = None
    #: answers by packaging a free turn: its first prompt is the free prompt
    #: and its contract defaults to the task's answer contract
    packages: bool = False
    #: the arm answers in one model call per item (Inspect tasks run only
    #: such arms); False: its policy may call the model more than once
    one_call: bool = True
    #: takes ``--max-rounds`` (answers again while the answer is invalid)
    rounds: bool = False
    #: the arm whose prompt this one shares, the grammar the only difference
    #: (the headline comparison: prompt_only -> constrained)
    grammar_twin: str | None = None
    #: arms this one is compared with, paired on the same items
    compare_with: tuple[str, ...] = ()
    #: how its policy was made (None: the one-turn policy)
    recipe: Recipe | None = None
    #: one call writes free text up to the think stop string, then the
    #: contract: its grammar lets free text run first, which an engine
    #: (``Engine.thinks``) and a server (``BackendManifest.grammar_refusal``)
    #: must carry, and a budget change redoes the call's later part
    thinks: bool = False

    def decide(self, ctx: ArmContext, turns: Sequence[TurnOutcome]) -> TurnPlan | None:
        return (self.next_turn or _one_turn)(ctx, turns)


#: the one-answer arm whose one turn a turn of each kind is. A task writes a
#: prompt and stops for a condition (``Task.prompt``), so a turn of kind
#: "free" is asked as the unconstrained arm's condition of the cell, "ask"
#: as prompt_only's and "constrained" as constrained's: the same request as
#: that arm's, generated once when a run has both. A package or think turn
#: is asked under the arm's own condition; a feedback turn extends another.
_ASKED_AS: dict[TurnKind, str] = {"free": "unconstrained", "ask": "prompt_only", "constrained": "constrained"}


def turn_condition(cond: Condition, kind: TurnKind) -> Condition:
    """The condition under which the task writes the prompt and stops of a
    turn of ``kind`` in ``cond``'s cell (and judges a free step's text)."""
    arm = _ASKED_AS.get(kind)
    if arm is None:
        return cond
    return replace(cond, arm=arm, contract=None if kind == "free" else cond.contract,
                   engine=cond.engine if kind == "constrained" else None)


arms: Registry[Arm] = Registry("arm", {
    name: "conformbench.arms.one_answer"
    for name in ("unconstrained", "prompt_only", "constrained", "reason_then_constrain")
} | {
    name: "conformbench.arms.multi_round" for name in ("repair", "resample", "fallback")
} | {"think_then_constrain": "conformbench.arms.think"})


def policy(name: str, *, uses_contract: bool = True, constrained: bool = False, description: str = "",
           rounds: bool = True, compare_with: tuple[str, ...] = ()) -> Callable[[Policy], Policy]:
    """Register the decorated function (or a factory's policy:
    ``policy("repair_terse")(repair(feedback=terse))``) as arm ``name``'s
    policy. An arm that applies a grammar in any turn says
    ``constrained=True`` (its conditions then name an engine); ``rounds``:
    it answers again, at most ``ctx.max_rounds`` times."""

    def register(fn: Policy) -> Policy:
        doc = (fn.decide if isinstance(fn, MadePolicy) else fn).__doc__ or ""
        arms.register(name)(Arm(name, uses_contract=uses_contract, constrained=constrained,
                                description=description or doc.strip().split("\n")[0],
                                next_turn=fn, one_call=False, rounds=rounds, compare_with=compare_with,
                                recipe=_recipe_of(fn)))
        return fn

    return register


_ARM_SPEC = re.compile(r"^([A-Za-z_][\w-]*)(?:\[([^\[\]]+)\])?$")


def split_arm_spec(spec: str) -> tuple[str, str | None]:
    """``constrained[answer]`` as (arm name, contract); the contract is None
    when none is written. A malformed spec is a UsageError."""
    match = _ARM_SPEC.match(spec.strip())
    if match is None:
        raise UsageError(f"bad arm {spec!r}: write an arm name, optionally with [contract]")
    return match.group(1), match.group(2)
