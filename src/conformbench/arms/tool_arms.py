"""tools[MODE]: the call made through the server's ``tools`` API, as agents
ship it (BFCL's FC mode). The prompt is the question alone; the item's
functions go in the request's ``tools`` and the bracket says how a call is
asked for (``records.tool_calls``):

- ``tools[auto]``: ``tool_choice: "auto"``: the model decides; a server
  enforces nothing and parses what the model wrote;
- ``tools[required]``: some call is forced (vLLM builds a grammar for it);
- ``tools[named]``: the item's one function is forced by name (items that
  offer one function);
- ``,strict`` after any of them sends each function with ``"strict": true``
  (OpenAI's promise that the arguments follow the schema).

The answer scored is the calls the server returned (``tool_calls``), never
the text beside them. Only the openai backend sends ``tools``; a task offers
its functions with ``Task.tool_functions``.
"""

from __future__ import annotations

from collections.abc import Sequence

from conformbench.arms.base import Arm, ArmContext, arms
from conformbench.records.rounds import TurnOutcome, TurnPlan
from conformbench.records.tool_calls import parse_tool_mode

__all__: list[str] = []


def _one_call(ctx: ArmContext, turns: Sequence[TurnOutcome]) -> TurnPlan | None:
    return None if turns else ctx.call_tools()


def _mode(text: str) -> str:
    return parse_tool_mode(text).spec


arms.register("tools")(Arm(
    "tools", constrained=False, contracts="none", next_turn=_one_call, mode_of=_mode,
    compare_with=(),
    description="the functions offered through the server's tools API: tools[auto|required|named(,strict)]",
))
