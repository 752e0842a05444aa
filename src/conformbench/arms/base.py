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
from dataclasses import dataclass
from typing import Literal, Protocol

from conformbench.errors import UsageError
from conformbench.jsontypes import JSONValue
from conformbench.records.items import Condition, Item
from conformbench.records.rounds import TurnKind, TurnOutcome, TurnPlan
from conformbench.registry import Registry

__all__ = [
    "Arm",
    "ArmContext",
    "ContractUse",
    "MadePolicy",
    "Policy",
    "Recipe",
    "answer_kind",
    "arms",
    "made",
    "policy",
    "split_arm_spec",
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

    def call_tools(self) -> TurnPlan:
        """A turn of kind "tools": the question alone, the item's functions
        offered through the server's ``tools`` API in the condition's mode
        (``records.tool_calls``)."""
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


def answer_kind(condition: Condition) -> TurnKind:
    """The kind of a one-answer condition's turn: "free" without a contract,
    "constrained" when it names an engine (the grammar on), else "ask"."""
    if condition.contract is None:
        return "free"
    return "ask" if condition.engine is None else "constrained"


def _one_turn(ctx: ArmContext, turns: Sequence[TurnOutcome]) -> TurnPlan | None:
    """One answer: the free turn without a contract, else the contract prompt
    (grammar on for an arm that applies one)."""
    if turns:
        return None
    kind = answer_kind(ctx.condition)
    return ctx.free() if kind == "free" else ctx.ask(grammar=kind == "constrained")


#: which contracts an arm's conditions name when its spec names none:
#: "none" (free text, no contract: the arm takes none), "every" (each of the
#: task's contracts) or "answer" (the task's answer contract)
ContractUse = Literal["none", "every", "answer"]


@dataclass(frozen=True)
class Arm:
    name: str
    #: some turn applies a grammar (the arm's conditions name an engine)
    constrained: bool
    description: str = ""
    #: the policy (None: one turn, see ``_one_turn``)
    next_turn: Policy | None = None
    #: the contracts its conditions name (see ``ContractUse``); answers are
    #: checked against the condition's contract unless "none"
    contracts: ContractUse = "every"
    #: the arm answers in one model call per item (Inspect tasks run only
    #: such arms); False: its policy may call the model more than once
    one_call: bool = True
    #: takes ``--max-rounds`` (answers again while the answer is invalid)
    rounds: bool = False
    #: the arm this one is paired with in the headline comparison: the same
    #: turns, the grammar the only difference (prompt_only -> constrained)
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
    #: the arm's bracket names a mode, not a contract (the tools arm's
    #: ``tools[required,strict]``): it parses the bracket into the
    #: condition's ``mode`` (its canonical spelling; a UsageError otherwise)
    mode_of: Callable[[str], str] | None = None

    def decide(self, ctx: ArmContext, turns: Sequence[TurnOutcome]) -> TurnPlan | None:
        return (self.next_turn or _one_turn)(ctx, turns)


arms: Registry[Arm] = Registry("arm", {
    name: "conformbench.arms.one_answer"
    for name in ("unconstrained", "prompt_only", "constrained", "reason_then_constrain")
} | {
    name: "conformbench.arms.multi_round" for name in ("repair", "resample", "fallback")
} | {"think_then_constrain": "conformbench.arms.think", "tools": "conformbench.arms.tool_arms"})


def policy(name: str, *, contracts: ContractUse = "every", constrained: bool = False, description: str = "",
           rounds: bool = True, compare_with: tuple[str, ...] = (), thinks: bool = False) -> Callable[[Policy], Policy]:
    """Register the decorated function (or a factory's policy:
    ``policy("repair_terse")(repair(feedback=terse))``) as arm ``name``'s
    policy. An arm that applies a grammar in any turn says
    ``constrained=True`` (its conditions then name an engine); ``rounds``:
    it answers again, at most ``ctx.max_rounds`` times; ``thinks``: one
    call writes free text up to a stop string, then the contract."""

    def register(fn: Policy) -> Policy:
        doc = (fn.decide if isinstance(fn, MadePolicy) else fn).__doc__ or ""
        arms.register(name)(Arm(name, constrained=constrained, contracts=contracts,
                                description=description or doc.strip().split("\n")[0],
                                next_turn=fn, one_call=False, rounds=rounds, compare_with=compare_with,
                                thinks=thinks, recipe=_recipe_of(fn)))
        return fn

    return register


_ARM_SPEC = re.compile(r"^([A-Za-z_][\w-]*)(?:\[([^\[\]]+)\])?$")


def split_arm_spec(spec: str) -> tuple[str, str | None]:
    """``constrained[answer]`` as (arm name, contract); the contract is None
    when none is written. A malformed spec is a UsageError."""
    match = _ARM_SPEC.match(spec.strip())
    if match is None:
        raise UsageError(f"bad arm {spec!r}: write an arm name, optionally with [contract] (or the tools "
                         "arm's [mode], e.g. tools[required,strict])")
    return match.group(1), match.group(2)
