"""The served side of function calling, checked rather than assumed.

- **Do the tools reach the model?** (``tools_reach``) The same question is
  sent with and without the functions in ``tools``; a chat template that
  renders ``tools`` makes the prompt longer (the server's
  ``usage.prompt_tokens``). Equal counts mean the server's template dropped
  them: the model never saw the functions, yet the server answers 200, and a
  run's tools answers say nothing about the model (the run is refused unless
  ``--allow-dropped-tools``; the scorer leaves such answers out unless it was given).
  A server that refuses the ``tool_choice`` asked (vLLM without
  ``--tool-call-parser``: HTTP 400) is asked again under ``none``, so its
  template is still judged.
- **The tools canary** (``tool_canary``), per ``tool_choice`` and ``strict``:
  one function whose one argument is an ``enum`` of a random constant the
  model would never write, offered beside a prompt that does not mention
  it. Under ``required`` or a named choice a call must come back (is the
  call forced?) and its arguments must be exactly that constant (are the
  arguments held to the schema?); under ``auto`` nothing is forced, and the
  verdict only says what came back. A forcing mode's reply that is cut at
  the token cap before a call came back is ``cut``, not ``not forced``: the
  server may force the call after text it lets through (llama-server's
  grammar for ``required``) or be in the middle of writing it (vLLM), and
  nothing stopped the model without one.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from conformbench.audits.canary import canary_constant, server_error_text
from conformbench.backends.base import Backend
from conformbench.records.base import FrozenRecord
from conformbench.records.generation import DecodingSettings, GenerationRequest, GenerationResult
from conformbench.records.prompt import CANARY_PROMPT, Message, Prompt
from conformbench.records.tool_calls import ToolFunction, ToolMode, ToolRequest

__all__ = ["CANARY_FUNCTION", "ToolCanary", "ToolReach", "canary_tools", "tool_canary", "tools_reach"]

#: the canary's function name (no model writes it unprompted)
CANARY_FUNCTION = "cb_record_code"
_MAX_TOKENS = 64


class ToolReach(FrozenRecord):
    """Prompt tokens of one question with and without the functions."""

    with_tools: int
    without_tools: int
    #: the counts are equal: the server's chat template dropped the tools
    dropped: bool
    #: why nothing could be compared (an error, a server that counts no tokens)
    error: str | None = None
    #: the user accepted a server that drops them (``--allow-dropped-tools``)
    allowed: bool = False
    #: the ``tool_choice`` the tools were counted under: the run's, or "none"
    #: where the server refused that one (``refused`` says how)
    choice: str = "auto"
    refused: str | None = None

    def line(self, where: str) -> str:
        """The verdict in one line."""
        if self.error is not None:
            return f"{where}: could not tell whether the tools reach the model ({self.error})"
        under = "" if self.refused is None else (
            f" (counted under tool_choice {self.choice}, as the server refused the first ask: {self.refused})")
        if self.dropped:
            return (f"{where}: the server's chat template drops the tools: the prompt is {self.with_tools} tokens "
                    f"with and without them, so the model never sees the functions{under} (serve a template "
                    "that renders tools, e.g. the shipped smollm2-tools.jinja; --allow-dropped-tools runs and "
                    "scores it anyway)")
        return (f"{where}: the tools reach the model ({self.without_tools} prompt tokens without them, "
                f"{self.with_tools} with){under}")


def _failed(result: GenerationResult) -> bool:
    return result.finish_reason == "error" and not result.prompt_tokens


def tools_reach(backend: Backend, request: GenerationRequest) -> ToolReach:
    """Send ``request`` (one that offers tools) with and without them, one
    token each, and compare the prompt tokens the server counted. A server
    that refuses the request's ``tool_choice`` (vLLM without
    ``--tool-call-parser`` answers HTTP 400 to auto, required and named)
    is asked once more under ``none``, which renders the tools all the same
    (vLLM's default), so a template that drops them is still named."""
    if request.tools is None:
        raise ValueError("tools_reach needs a request that offers tools")
    settings = DecodingSettings(max_tokens=1, temperature=0.0, seed=request.settings.seed)
    asked = GenerationRequest(request.prompt, settings, tools=request.tools)
    bare = GenerationRequest(request.prompt, settings)
    with_tools, without = backend.generate_many([asked, bare])
    choice, refused = request.tools.mode.choice, None
    if _failed(with_tools) and not _failed(without) and choice != "none":
        quiet = ToolRequest(request.tools.functions, ToolMode("none"))
        retried = backend.generate(GenerationRequest(request.prompt, settings, tools=quiet))
        if not _failed(retried):
            refused = server_error_text(with_tools.error or "no detail")
            choice, with_tools = "none", retried
    failed = [r for r in (with_tools, without) if _failed(r)]
    if failed:
        return ToolReach(with_tools=0, without_tools=0, dropped=False, choice=choice,
                         error=server_error_text(failed[0].error or "no detail"))
    if not without.prompt_tokens:
        return ToolReach(with_tools=with_tools.prompt_tokens, without_tools=0, dropped=False, choice=choice,
                         refused=refused, error="the server counts no prompt tokens (usage.prompt_tokens)")
    return ToolReach(with_tools=with_tools.prompt_tokens, without_tools=without.prompt_tokens, choice=choice,
                     refused=refused, dropped=with_tools.prompt_tokens == without.prompt_tokens)


def canary_tools(constant: str, mode: ToolMode) -> ToolRequest:
    """The canary's one function: its one argument an enum of ``constant``."""
    parameters = {"type": "object", "properties": {"code": {"type": "string", "enum": [constant]}},
                  "required": ["code"], "additionalProperties": False}
    function = ToolFunction(CANARY_FUNCTION, "Record a code.", parameters, CANARY_FUNCTION)
    return ToolRequest((function,), mode)


Forced = Literal["forced", "not forced", "cut", "not asked"]


class ToolCanary(FrozenRecord):
    """One mode's canary: what came back, whether the call was forced where
    the mode forces one, and whether its arguments were held to the schema."""

    mode: str
    constant: str
    #: calls returned (the scored text: ``records.tool_calls.calls_text``)
    text: str
    content: str | None = None
    finish_reason: str
    server_finish_reason: str | None = None
    #: a call came back where the mode forces one ("not asked": auto; "cut":
    #: none came back before the token cap, so nothing is known)
    forced: Forced
    #: the first call's arguments are exactly the constant (None: no call)
    held: bool | None
    error: str | None = None

    def line(self) -> str:
        if self.error is not None and not self.text.startswith("[{"):
            return f"tools[{self.mode}]: the server answered an error: {self.error}"
        held = {True: "arguments held to the schema", False: "arguments NOT held to the schema",
                None: "no call to judge"}[self.held]
        called = "a call" if self.text.startswith("[{") else "no call"
        forced = {"not asked": "", "cut": "cut at the token cap before a call came back; "}.get(
            self.forced, f"call {self.forced}; ")
        return f"tools[{self.mode}]: {called} ({forced}{held}; finish {self.server_finish_reason or self.finish_reason})"


def _held(result: GenerationResult, constant: str) -> bool | None:
    calls = result.tool_calls or ()
    if not calls:
        return None
    try:
        return calls[0].name == CANARY_FUNCTION and json.loads(calls[0].arguments) == {"code": constant}
    except (ValueError, RecursionError):
        return False


def tool_canary(backend: Backend, mode: ToolMode, seed: int, prompt: Prompt = CANARY_PROMPT) -> ToolCanary:
    """The canary of ``mode`` on the backend's server (greedy, seeded)."""
    constant = canary_constant(seed)
    request = GenerationRequest(prompt, DecodingSettings(max_tokens=_MAX_TOKENS, temperature=0.0, seed=seed),
                                tools=canary_tools(constant, mode))
    result = backend.generate(request)
    return ToolCanary(mode=mode.spec, constant=constant, text=result.text, content=result.content,
                      finish_reason=result.finish_reason, server_finish_reason=result.server_finish,
                      forced=_forced(mode, result), held=_held(result, constant),
                      error=None if result.error is None else server_error_text(result.error))


def _forced(mode: ToolMode, result: GenerationResult) -> Forced:
    if mode.choice == "auto":
        return "not asked"
    if result.tool_calls:
        return "forced"
    return "cut" if result.finish_reason == "length" else "not forced"


def canary_prompt_with(question: str) -> Prompt:
    """A one-message prompt (for checks on a task's own question)."""
    return Prompt((Message("user", question),))


def as_record(value: FrozenRecord) -> dict[str, Any]:
    return value.model_dump(mode="json")
