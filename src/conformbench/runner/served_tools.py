"""A run's checks of a server's tools before its tools arms run
(``audits.tool_canary``): do the tools reach the model (prompt tokens with
and without them, on the first item's question), and the tools canary of
each mode the run asks for. Both are recorded in the model's record
(``canary["tools"]``); a server whose template drops the tools refuses the
run in one line unless ``--allow-dropped-tools``."""

from __future__ import annotations

from typing import Any

from conformbench.audits.tool_canary import tool_canary, tools_reach
from conformbench.backends.base import Backend
from conformbench.errors import UsageError
from conformbench.records.generation import GenerationRequest
from conformbench.records.spec import ModelSpec
from conformbench.records.tool_calls import ToolMode, ToolRequest, parse_tool_mode
from conformbench.runner.progress import RunProgress
from conformbench.runner.units import TaskPlan, WorkUnit

__all__ = ["ALLOW_DROPPED", "run_tool_checks"]

#: the openai backend's option that accepts a server dropping the tools
ALLOW_DROPPED = "allow_dropped_tools"


def run_tool_checks(model: ModelSpec, backend: Backend, plans: list[TaskPlan], todo: list[WorkUnit],
                    seed: int, progress: RunProgress) -> dict[str, Any]:
    """The ``tools`` entry of the model's canary record ({} without tools arms)."""
    tooled = [u for u in todo if u.condition.mode is not None]
    if not tooled:
        return {}
    plan = next(p for p in plans if p.task.name == tooled[0].task)
    progress.stage(f"{model.label}: do the tools reach the model?")
    unit = tooled[0]  # its functions offered under auto (a named choice needs one function; the check, none)
    asked = GenerationRequest(plan.task.turn_prompt(unit.item, unit.condition, "tools"), plan.settings,
                              tools=ToolRequest(plan.task.tool_functions(unit.item), ToolMode("auto")))
    reach = tools_reach(backend, asked)
    allowed = bool(model.extra.get(ALLOW_DROPPED, False))
    reach = reach.model_copy(update={"allowed": allowed and reach.dropped})
    line = reach.line(f"model {model.label!r}")
    if reach.dropped and not allowed:
        raise UsageError(f"{line}; the run stops")
    progress.log(line)
    modes = sorted({u.condition.mode for u in tooled if u.condition.mode is not None})
    progress.stage(f"{model.label}: tools canary ({', '.join(modes)})")
    canaries = {}
    for mode in modes:
        canary = tool_canary(backend, parse_tool_mode(mode), seed)
        progress.log(f"{model.label}: {canary.line()}")
        canaries[mode] = canary.model_dump(mode="json")
    return {"tools": {"reach": reach.model_dump(mode="json"), "canary": canaries}}
