"""Calls read from a prompt-mode answer, as BFCL's prompt mode reads its
JSON return format (``ret_fmt=json``: ``[{"function": NAME, "parameters":
{...}}, ...]``), re-implemented from its behaviour (bfcl_eval
``default_decode_ast_prompting``, ``parse_json_function_call``,
``is_function_calling_format_output`` at gorilla 6ea57973):

1. strip backticks, newlines and spaces from both ends; add ``[`` in front
   and ``]`` behind where the text lacks them;
2. take the span from the first ``[`` to the last ``]``, and in it the first
   run that looks like a list of objects; read it as JSON (the whole span
   when no such run);
3. text that is not JSON reads as no call; each object of the list must
   have ``function`` and ``parameters`` (else the answer is unreadable),
   anything else in the list is skipped;
4. each call's parameters must be an object, else the answer is unreadable.

One difference, outside the JSON data model only: ``NaN``, ``Infinity`` and
``-Infinity``, which Python's ``json.loads`` (and so BFCL) reads as floats,
are read as the strings ``"NaN"``... (a wrong value either way).

BFCL counts an unreadable answer as no call: right on irrelevance, wrong
elsewhere. So does ``CallAnswer(readable=False)``. The reader is exactly
as strict as BFCL's: no stricter, and no more lenient, so the official
verdicts hold (``tests/tasks/bfcl/test_official_agreement.py``).
"""

from __future__ import annotations

import json
from typing import Any

import re2

from conformbench.formats.limits import oversize
from conformbench.jsontypes import JSONValue
from conformbench.tasks.bfcl.calls import CallAnswer
from conformbench.tasks.bfcl.functions import FunctionCall

__all__ = ["read_calls"]

#: BFCL's two patterns, run by RE2 (linear time): Python's ``re`` takes
#: minutes on ``[{a},{a},...`` without a closing bracket
_DOTALL = re2.Options()
_DOTALL.dot_nl = True
_SPAN = re2.compile(r"\[.*\]", _DOTALL)
_LIST_OF_OBJECTS = re2.compile(r"\[\s*{.*?}\s*(?:,\s*{.*?}\s*)*\]", _DOTALL)
_UNREADABLE = CallAnswer((), readable=False)


def _decoded(text: str) -> list[Any] | None:
    """BFCL's decoded list, or None where its decoder raises."""
    body = text.strip("`\n ")
    if not body.startswith("["):
        body = "[" + body
    if not body.endswith("]"):
        body = body + "]"
    span = _SPAN.search(body)
    if span is not None:
        body = span.group(0)
    run = _LIST_OF_OBJECTS.search(body)
    if run is not None:
        body = run.group(0)
    try:
        # NaN and Infinity (json.loads takes them) stay words: a value
        # outside the JSON data model never reaches a score or a report
        value = json.loads(body, parse_constant=str)
    except ValueError:
        return []
    except RecursionError:
        return None
    out: list[Any] = []
    if not isinstance(value, list):  # the text is wrapped in brackets: never here
        return None
    for entry in value:
        if isinstance(entry, dict):
            if "function" not in entry or "parameters" not in entry:
                return None
            if isinstance(entry["function"], (list, dict)):  # unhashable: BFCL's decoder raises
                return None
            out.append((entry["function"], entry["parameters"]))
    return out


def read_calls(text: str) -> CallAnswer:
    """The calls in a prompt-mode answer (see the module's rules)."""
    if oversize(text):
        return _UNREADABLE
    decoded = _decoded(text)
    if decoded is None:
        return _UNREADABLE
    calls: list[FunctionCall] = []
    for name, parameters in decoded:
        if not isinstance(parameters, dict):
            return _UNREADABLE
        arguments: dict[str, JSONValue] = parameters
        calls.append(FunctionCall(name if isinstance(name, str) else json.dumps(name), arguments))
    return CallAnswer(tuple(calls))
