"""BFCL prompt mode's system prompt, with the JSON return format, and the
offered functions rendered in one of the five schema formats.

The wording is BFCL's ``classic`` style in its ``plaintext`` template
(bfcl_eval/constants/default_prompts.py at gorilla 6ea57973), with
``ret_fmt=json`` (BFCL's own JSON return format, so that the grammar arm
can force the very format prompt mode asks for) and no tool-call tag. BFCL
lists the function documents with ``json.dumps(functions, indent=4)``;
here each function is shown as one JSON Schema (its arguments' schema after
BFCL's type conversion, titled with the function's name and described by
its description), rendered by the project's own schema formats
(``--function-format``: json, yaml, xml, python, nl), under a line
``Function NAME:`` in every format.
"""

from __future__ import annotations

from conformbench.formats.base import format_display_name, schema_formats
from conformbench.jsontypes import Schema
from conformbench.records.prompt import Message, Prompt
from conformbench.tasks.bfcl.calls import CallItem, OfferedFunction

__all__ = ["FUNCTION_FORMATS", "call_prompt", "function_schema", "render_functions"]

FUNCTION_FORMATS = ("json", "yaml", "xml", "python", "nl")

_OUTPUT_FORMAT = ('```json\n[{"function":"func_name1","parameters":{"param1":"value1","param2":"value2"...}},'
                  '{"function":"func_name2","parameters":{"param":"value"}}]\n```')
_PERSONA = "You are an expert in composing functions."
_TASK = ("You are given a question and a set of possible functions. Based on the question, you will need to "
         "make one or more function/tool calls to achieve the purpose. If none of the functions can be used, "
         "point it out. If the given question lacks the parameters required by the function, also point it out.")
_CALL_FORMAT = ("You should only return the function calls in your response.\n\nIf you decide to invoke any of "
                "the function(s), you MUST put it in the format of {output_format}.  You SHOULD NOT include any "
                "other text in the response.")
_MULTITURN = ("At each turn, you should try your best to complete the tasks requested by the user within the "
              "current turn. Continue to output functions to call until you have fulfilled the user's request to "
              "the best of your ability. Once you have no more functions to call, the system will consider the "
              "current turn complete and proceed to the next turn or task.")
_TOOLS = "Here is a list of functions in {format} format that you can invoke.\n{functions}\n"
_TEMPLATE = "{persona}{task}\n\n{tool_call_format}\n\n{multiturn_behavior}\n\n{available_tools}"


def function_schema(function: OfferedFunction) -> Schema:
    """The function as one schema: its name as ``title``, its description,
    then its arguments' schema (key order kept)."""
    return {"title": function.name, "description": function.document.description, **function.schema}


def render_functions(item: CallItem, function_format: str) -> str:
    """Every offered function in ``function_format``, one after another,
    each under a line naming it exactly (the Python rendering turns the
    title into a class name, so the name must be said in every format)."""
    renderer = schema_formats.get(function_format)()
    return "\n\n".join(f"Function {f.name}:\n{renderer.render(function_schema(f))}" for f in item.functions)


def system_prompt(item: CallItem, function_format: str) -> str:
    return _TEMPLATE.format(
        persona=_PERSONA,
        task=_TASK,
        tool_call_format=_CALL_FORMAT.format(output_format=_OUTPUT_FORMAT),
        multiturn_behavior=_MULTITURN,
        available_tools=_TOOLS.format(format=format_display_name(function_format),
                                      functions=render_functions(item, function_format)),
    )


def call_prompt(item: CallItem, function_format: str) -> Prompt:
    """BFCL prompt mode's messages: its system prompt (an item's own system
    message follows it, after a blank line, as BFCL does), then the user's."""
    system = system_prompt(item, function_format)
    messages: list[Message] = []
    for message in item.messages:
        if message.role == "system":
            system = f"{system}\n\n{message.content}"
        else:
            messages.append(Message("user", message.content))
    return Prompt((Message("system", system), *messages))
