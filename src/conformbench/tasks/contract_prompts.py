"""Prompt texts of the decoding-arm tasks (gsm8k, bfcl-simple, custom and
ContractTask subclasses), all in one place so they can be read and compared.

Rules the texts keep:
- prompt_only[S] and constrained[S] get the same prompt (the grammar is the
  only difference), which shows the contract schema S verbatim;
- schemas are shown with their own key order (never sorted): property
  order is part of the contract;
- the packaging turn of reason_then_constrain follows the free-text
  conversation and asks only for the JSON of the answer contract.
"""

from __future__ import annotations

import json

from conformbench.jsontypes import Schema
from conformbench.records.prompt import Message, Prompt

__all__ = [
    "BFCL_FREE",
    "BFCL_FUNCTION",
    "BFCL_JSON",
    "BFCL_PACKAGING",
    "CUSTOM_FREE",
    "GSM8K_FREE",
    "json_contract_request",
    "packaging_request",
    "show_schema",
    "thinking_request",
    "two_turn_prompt",
    "user_prompt",
]


def show_schema(schema: Schema) -> str:
    """The schema as indented JSON in a fenced block, key order kept."""
    return "```json\n" + json.dumps(schema, indent=2, ensure_ascii=False) + "\n```"


def user_prompt(text: str) -> Prompt:
    return Prompt(messages=(Message("user", text),))


def json_contract_request(schema: Schema) -> str:
    """The contract part of a prompt_only[S] / constrained[S] prompt."""
    return (
        "Reply with only a JSON object that matches this JSON Schema:\n"
        f"{show_schema(schema)}"
    )


def packaging_request(schema: Schema) -> str:
    """The second user turn of reason_then_constrain."""
    return (
        "Now give your final answer as a JSON object that matches this JSON Schema:\n"
        f"{show_schema(schema)}\n"
        "Reply with only the JSON object."
    )


def thinking_request(schema: Schema, stop: str) -> str:
    """What think_then_constrain adds to the free prompt: think first, then
    the stop string, then the JSON answer (one call)."""
    return (
        "Your final answer must be a JSON object that matches this JSON Schema:\n"
        f"{show_schema(schema)}\n"
        f"Think it through step by step first. When you have finished thinking, write {stop} and then, "
        "right after it, only the JSON object."
    )


def two_turn_prompt(first: Prompt, free_text: str, request: str) -> Prompt:
    """The free-text conversation followed by the packaging request."""
    return Prompt(
        messages=(*first.messages, Message("assistant", free_text), Message("user", request))
    )


# ------------------------------------------------------------------ GSM8K

GSM8K_FREE = (
    "{question}\n\n"
    "Solve the problem step by step. Then write the final answer as a number "
    'on its own last line, in the form "Answer: <number>".'
)


# ------------------------------------------------------------------ BFCL

BFCL_FUNCTION = (
    "You can call this function:\n"
    "name: {name}\n"
    "description: {description}\n"
)

BFCL_FREE = (
    BFCL_FUNCTION
    + "parameters (JSON Schema):\n{schema}\n\n"
    "Request: {question}\n\n"
    "Write the one call of {name} that answers the request, in Python syntax "
    'with keyword arguments, for example {name}(param1=1, param2="text"). '
    "Reply with only the call."
)

BFCL_JSON = (
    BFCL_FUNCTION
    + "\nRequest: {question}\n\n"
    "Write the arguments of the one call of {name} that answers the request "
    "as a JSON object that matches this JSON Schema:\n{schema}\n"
    "Reply with only the JSON object."
)

BFCL_PACKAGING = (
    "Now write the arguments of that call as a JSON object that matches this "
    "JSON Schema:\n{schema}\n"
    "Reply with only the JSON object."
)


# ------------------------------------------------------------------ custom

CUSTOM_FREE = "{question}\n\nReply with only the answer."
