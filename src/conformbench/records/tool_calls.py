"""Function calls through a server's ``tools`` API: what a request offers
(``ToolRequest``: the functions as sent, ``tool_choice``, ``strict``),
what a replay records of it (``ToolShape``: the request's shape;
``RawToolCall``: each call exactly as the server returned it) and the
answer text a tools arm is scored on (``calls_text``).

The arm's mode is written in its bracket (``tools[auto]``,
``tools[required,strict]``, ``tools[named]``): ``tool_choice`` first, then
``strict`` where the functions are sent with ``"strict": true``.

The scored text of a tools answer is the calls alone, as a JSON array of
``{"name": ..., "arguments": ...}`` in the server's order (``[]``: no
call), each name as the task offered it (a name the server had to be sent
renamed, BFCL's dotted names, is mapped back). What the model wrote beside
the calls (``content``) is recorded, never scored as a call: BFCL's FC mode
reads calls from ``tool_calls`` only. Arguments that are not JSON text are
kept as the raw string under ``"arguments_text"``: no call then has valid
arguments.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

from conformbench.errors import UsageError
from conformbench.jsontypes import JSONValue, Schema
from conformbench.records.base import FrozenRecord
from conformbench.registry import did_you_mean

__all__ = [
    "TOOL_CHOICES",
    "TOOL_FLAGS",
    "RawToolCall",
    "ToolChoice",
    "ToolFunction",
    "ToolMode",
    "ToolRequest",
    "ToolShape",
    "calls_text",
    "parse_tool_mode",
]

#: ``tool_choice``: "auto" (the model decides), "required" (some call is
#: forced), "named" (the one offered function is forced by name: items that
#: offer one function); "none" (no call asked for) is no arm's: the
#: tools-reach check falls back to it where a server refuses the others
ToolChoice = Literal["auto", "required", "named", "none"]
#: the choices an arm's bracket may name
TOOL_CHOICES: tuple[ToolChoice, ...] = ("auto", "required", "named")
#: what may follow the choice in the bracket
TOOL_FLAGS: tuple[str, ...] = ("strict",)


@dataclass(frozen=True)
class ToolMode:
    """A tools arm's mode: its ``tool_choice`` and whether the functions go
    with ``strict``."""

    choice: ToolChoice
    strict: bool = False

    @property
    def spec(self) -> str:
        """As the bracket writes it: ``required``, ``required,strict``."""
        return self.choice + (",strict" if self.strict else "")


def parse_tool_mode(text: str) -> ToolMode:
    """``required,strict`` as a ToolMode; a UsageError in one line otherwise."""
    parts = [p.strip() for p in text.split(",")]
    choice, flags = parts[0], parts[1:]
    if choice not in TOOL_CHOICES:
        raise UsageError(f"tools[{text}]: the tool choice must be one of {', '.join(TOOL_CHOICES)}"
                         f"{did_you_mean(choice, list(TOOL_CHOICES))} (e.g. tools[required,strict])")
    unknown = [f for f in flags if f not in TOOL_FLAGS]
    if unknown or len(flags) != len(set(flags)):
        raise UsageError(f"tools[{text}]: after the tool choice only 'strict' may follow, once "
                         f"(e.g. tools[{choice},strict])")
    return ToolMode(choice, strict="strict" in flags)


@dataclass(frozen=True)
class ToolFunction:
    """One function offered: ``name`` as sent (the server's name rules),
    ``parameters`` the JSON Schema sent, ``original`` the task's own name."""

    name: str
    description: str
    parameters: Schema
    original: str

    def as_tool(self, strict: bool) -> dict[str, JSONValue]:
        """The OpenAI ``tools`` entry."""
        function: dict[str, JSONValue] = {"name": self.name, "description": self.description,
                                          "parameters": self.parameters}
        if strict:
            function["strict"] = True
        return {"type": "function", "function": function}


@dataclass(frozen=True)
class ToolRequest:
    """The functions a request offers and how a call is asked for."""

    functions: tuple[ToolFunction, ...]
    mode: ToolMode

    def __post_init__(self) -> None:
        if not self.functions:
            raise UsageError("a tools request offers at least one function")

    def tool_choice(self) -> JSONValue:
        """The request's ``tool_choice`` (named: the first function's name;
        a run sends a named choice only for an item offering one function,
        and records the others as excluded)."""
        if self.mode.choice == "named":
            return {"type": "function", "function": {"name": self.functions[0].name}}
        return self.mode.choice

    def original_name(self, sent: str) -> str:
        """The task's name of the function sent as ``sent`` (unknown names as they are)."""
        return next((f.original for f in self.functions if f.name == sent), sent)

    @property
    def shape(self) -> ToolShape:
        return ToolShape(functions=[f.name for f in self.functions], tool_choice=self.mode.choice,
                         strict=self.mode.strict)


class ToolShape(FrozenRecord):
    """What a replay records of a tools request: the function names sent,
    the tool choice and ``strict`` (the whole body is its ``engine_input``)."""

    functions: list[str]
    tool_choice: ToolChoice
    strict: bool


class RawToolCall(FrozenRecord):
    """One call as the server returned it: its ``function.name`` and
    ``function.arguments`` (a string in the OpenAI API; anything else is
    recorded as its JSON text), and the call's ``id`` where it gave one."""

    name: str
    arguments: str
    id: str | None = None


def _arguments(raw: str) -> tuple[str, JSONValue]:
    try:
        return "arguments", json.loads(raw)
    except (ValueError, RecursionError):
        return "arguments_text", raw


def calls_text(calls: tuple[RawToolCall, ...] | list[RawToolCall], request: ToolRequest | None) -> str:
    """The scored text of a tools answer (the module's docstring)."""
    out: list[JSONValue] = []
    for call in calls:
        key, value = _arguments(call.arguments)
        name = request.original_name(call.name) if request is not None else call.name
        out.append({"name": name, key: value})
    return json.dumps(out, ensure_ascii=False)
