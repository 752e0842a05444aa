"""BFCL's function calls: this package owns the records every way an item is
answered shares (here), the prompt mode's system prompt and offered functions
(``prompt_mode``), the calls read from a prompt-mode answer (``answer_reading``)
and BFCL's AST verdict on a list of calls with the call metrics (``verdicts``).

Function-call records shared by every way a BFCL v4 item is answered.

The interface between the tasks (``bfcl.v4``: the items, the prompt-mode
and grammar arms) and whatever else produces calls (the openai backend's
``tools`` arms): an item says which functions it offers (``CallItem``:
each as its BFCL document and its arguments' JSON Schema after BFCL's type
conversion), an answer is a list of calls or none (``CallAnswer``), and
``bfcl.calls.verdicts.score_calls`` turns the pair into a ``CallScore``.

Function names are BFCL's own (``math.factorial``); ``tool_name`` is the
name a tools API takes (BFCL's ``convert_to_tool`` replaces each ``.`` with
``_``, as the OpenAI API allows ``^[a-zA-Z0-9_-]{1,64}$`` only) and
``CallItem.from_tool_name`` maps it back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from conformbench.errors import UsageError
from conformbench.jsontypes import JSONValue, Schema
from conformbench.tasks.bfcl.functions import BfclFunction, FunctionCall, parameters_schema

__all__ = [
    "CATEGORIES",
    "CallAnswer",
    "CallItem",
    "CallMessage",
    "CallScore",
    "OfferedFunction",
    "PossibleCall",
    "tool_name",
]

#: the BFCL v4 single-turn categories shipped, in BFCL's order
CATEGORIES: tuple[str, ...] = (
    "simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance",
    "live_simple", "live_parallel", "live_parallel_multiple",
)


def tool_name(name: str) -> str:
    """The name a tools API gets for BFCL function ``name`` (``convert_to_tool``)."""
    return re.sub(r"\.", "_", name)


@dataclass(frozen=True)
class OfferedFunction:
    """One function an item offers: the BFCL document as shipped and the
    JSON Schema of its arguments (``bfcl.functions.parameters_schema``)."""

    document: BfclFunction
    schema: Schema

    @classmethod
    def of(cls, document: BfclFunction) -> OfferedFunction:
        return cls(document, parameters_schema(document))

    @property
    def name(self) -> str:
        return self.document.name

    @property
    def tool_name(self) -> str:
        return tool_name(self.document.name)


@dataclass(frozen=True)
class PossibleCall:
    """One call of BFCL's ground truth: the function and, per parameter,
    the accepted values (``""`` among them: the parameter may be left out)."""

    name: str
    accepted: dict[str, list[JSONValue]]

    def to_json(self) -> dict[str, JSONValue]:
        """BFCL's own shape: ``{name: {parameter: [values]}}``."""
        return {self.name: dict(self.accepted)}


@dataclass(frozen=True)
class CallMessage:
    """A message of the item's question turn (some live items open with a system message)."""

    role: Literal["system", "user"]
    content: str


@dataclass(frozen=True)
class CallItem:
    """A BFCL v4 single-turn item as every call arm sees it."""

    id: str
    #: a BFCL category (``CATEGORIES``): it picks the official checker's path
    category: str
    messages: tuple[CallMessage, ...]
    functions: tuple[OfferedFunction, ...]
    #: the ground truth's calls; empty: no call is the right answer (irrelevance)
    possible: tuple[PossibleCall, ...]

    @property
    def expects_call(self) -> bool:
        return bool(self.possible)

    def function(self, name: str) -> OfferedFunction | None:
        """The offered function of BFCL name ``name``, or None."""
        return next((f for f in self.functions if f.name == name), None)

    def from_tool_name(self, name: str) -> str:
        """BFCL's name for a name a tools API returned (itself when no
        offered function's tool name is ``name``)."""
        if self.function(name) is not None:
            return name
        return next((f.name for f in self.functions if f.tool_name == name), name)

    def question(self) -> str:
        """The user's message (the last one)."""
        return self.messages[-1].content


@dataclass(frozen=True)
class CallAnswer:
    """The calls read from one answer, in the order written; no calls: the
    answer made none. ``readable`` is False when the output could not be
    read as calls at all (BFCL then counts it as no call: right on
    irrelevance, wrong elsewhere)."""

    calls: tuple[FunctionCall, ...] = ()
    readable: bool = True

    @property
    def no_call(self) -> bool:
        return not self.calls

    @classmethod
    def of(cls, calls: list[tuple[str, dict[str, JSONValue]]]) -> CallAnswer:
        """From ``[(name, arguments)]``; ``[]`` is the answer "no call"."""
        return cls(tuple(FunctionCall(name, dict(arguments)) for name, arguments in calls))

    def to_json(self) -> list[JSONValue]:
        return [call.to_json() for call in self.calls]

    @classmethod
    def from_json(cls, value: JSONValue) -> CallAnswer:
        """The inverse of ``to_json`` (None: an unreadable answer)."""
        if value is None:
            return cls((), readable=False)
        if not isinstance(value, list):
            raise UsageError("a call answer is a list of {name, arguments} objects")
        calls: list[FunctionCall] = []
        for entry in value:
            name = entry.get("name") if isinstance(entry, dict) else None
            arguments = entry.get("arguments") if isinstance(entry, dict) else None
            if not isinstance(name, str) or not isinstance(arguments, dict):
                raise UsageError("a call answer is a list of {name, arguments} objects")
            calls.append(FunctionCall(name, arguments))
        return cls(tuple(calls))


@dataclass(frozen=True)
class CallScore:
    """What one answer earns on one item (``verdicts.score_calls``)."""

    #: the answer made at least one call
    called: bool
    #: it called where a function fits and did not where none does
    decision_right: bool
    #: the functions called are the expected ones (as a multiset); None on
    #: an item where no call is right
    right_function: bool | None
    #: every call names an offered function and its arguments are valid
    #: against that function's schema; None when no call was made
    arguments_valid: bool | None
    #: BFCL's verdict: the AST match (irrelevance: no call made)
    correct: bool
    #: why the answer is wrong (None when correct)
    error: str | None = None
