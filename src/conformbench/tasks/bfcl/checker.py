"""AST match for BFCL "simple" items, following the rules of the official
BFCL checker (bfcl_eval/eval_checker/ast_eval/ast_checker.py, Python
language, simple category). Written from its documented behaviour; every
deviation is listed in docs/tasks.md.

A possible answer maps each parameter to the list of accepted values; ``""``
in that list means the parameter may be omitted. Nothing is executed.

Rules, in the official order:
1. the function name matches (free-text calls only; JSON arms imply it);
2. every required parameter is present;
3. every given parameter is declared and has a possible answer, its Python
   type matches the declared BFCL type (an int is accepted for ``float``; a
   value of the possible answers' own type is accepted as a "variable"),
   and its value is among the possible answers: strings after
   standardisation (lowercase; spaces and ``,./-_*^`` removed; ``'`` as
   ``"``), lists element-wise, dicts key by key, lists of dicts in order;
4. every omitted parameter has ``""`` among its possible answers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, cast

from conformbench.jsontypes import JSONValue
from conformbench.tasks.bfcl.functions import BfclFunction, FunctionCall

__all__ = ["CallJudgement", "check_call", "reference_arguments", "standardize"]

#: the Python type the official checker expects for each BFCL type
_PY_TYPES: dict[str, type] = {
    "string": str,
    "integer": int,
    "float": float,
    "boolean": bool,
    "array": list,
    "tuple": list,
    "dict": dict,
    "any": str,
}
_NESTED = ("array", "tuple")
_STRIP = re.compile(r"[ ,./\-_*^]")


@dataclass(frozen=True)
class CallJudgement:
    """Whether one function call matches the item's possible answer (BFCL's
    AST check): not a ``records.rounds.Verdict``, which judges an answer
    against its contract."""

    correct: bool
    #: why the call is wrong (None when correct)
    error: str | None = None


_RIGHT = CallJudgement(True)


def standardize(text: str) -> str:
    """The official string normalisation (so 'April 1, 2024' == 'april 1 2024')."""
    return _STRIP.sub("", text).lower().replace("'", '"')


def check_call(
    function: BfclFunction, call: FunctionCall, possible: dict[str, list[Any]], *, check_name: bool
) -> CallJudgement:
    """Judge one call against the item's possible answer."""
    if check_name and call.name != function.name:
        return CallJudgement(False, f"wrong function name {call.name!r} (expected {function.name!r})")
    details: dict[str, Any] = function.parameters.get("properties", {})
    for name in function.parameters.get("required", []):
        if name not in call.arguments:
            return CallJudgement(False, f"missing required parameter {name!r}")
    for name, value in call.arguments.items():
        if name not in details or name not in possible:
            return CallJudgement(False, f"unexpected parameter {name!r}")
        verdict = _check_param(name, value, details[name], possible[name])
        if not verdict.correct:
            return verdict
    for name, options in possible.items():
        if name not in call.arguments and "" not in options:
            return CallJudgement(False, f"parameter {name!r} omitted but not optional")
    return _RIGHT


def _check_param(name: str, value: JSONValue, spec: dict[str, Any], options: list[Any]) -> CallJudgement:
    bfcl_type = spec.get("type", "")
    expected = _PY_TYPES.get(bfcl_type)
    if expected is None:
        return CallJudgement(False, f"parameter {name!r} has unknown type {bfcl_type!r}")
    nested = None
    if bfcl_type in _NESTED:
        nested = _PY_TYPES.get(spec.get("items", {}).get("type", "any"), str)
    if bfcl_type == "float" and type(value) is int:
        value = float(value)
    ok, is_variable = _type_check(value, options, expected, nested)
    if not ok:
        return CallJudgement(False, f"parameter {name!r}: wrong type {_json_type(value)} for {bfcl_type}")
    if not is_variable:
        matched = _match_by_type(value, options, expected, nested)
        if matched is not None:
            return _RIGHT if matched else CallJudgement(False, f"parameter {name!r}: wrong value {value!r}")
    if value in options:
        return _RIGHT
    return CallJudgement(False, f"parameter {name!r}: wrong value {value!r}")


def _match_by_type(value: Any, options: list[Any], expected: type, nested: type | None) -> bool | None:
    """Structural match for dicts, lists and strings; None: compare plainly."""
    if expected is dict:
        return _dict_match(value, options)
    if expected is list and nested is dict:
        return _list_of_dicts_match(value, options)
    if expected is str:
        return standardize(value) in [standardize(o) for o in options if type(o) is str]
    if expected is list:
        lists = [found for found in map(_as_list, options) if found is not None]
        return _std_list(value) in [_std_list(found) for found in lists]
    return None


def _answer_type(options: list[Any]) -> type | None:
    for option in options:
        if option != "":
            return type(option)
    return None


def _type_check(value: Any, options: list[Any], expected: type, nested: type | None) -> tuple[bool, bool]:
    """(type ok, value is a 'variable'): the official type rules.

    A value whose type differs from the declared one is still accepted when
    it has the type of the possible answers (the dataset writes variable
    names as strings); the value is then compared without normalisation.
    """
    answer_type = _answer_type(options)
    is_variable = answer_type is not None and answer_type is not expected
    elements: list[Any] = value if nested is not None and type(value) is list else []
    if type(value) is expected:
        if nested is None:
            return True, is_variable
        for option in options:
            # A non-list option (the optional marker "") passes the nested check,
            # as in the official checker.
            if type(option) is not list or all(
                _type_check(element, option, nested, None)[0] for element in elements
            ):
                return True, is_variable
        return False, is_variable
    if answer_type is not None and type(value) is answer_type:
        return True, True
    return False, is_variable


def _as_list(option: Any) -> list[Any] | None:
    # The official checker iterates over each option, so the optional
    # marker "" reads as an empty list; other non-lists cannot match.
    if option == "":
        return []
    return option if type(option) is list else None


def _std_list(values: list[Any]) -> list[Any]:
    return [standardize(v) if type(v) is str else v for v in values]


def _std_value(value: Any) -> Any:
    return standardize(value) if type(value) is str else value


def _dict_match(value: dict[str, Any], options: list[Any]) -> bool:
    for option in options:
        if type(option) is dict and _dict_matches_option(value, option):
            return True
    return False


def _dict_matches_option(value: dict[str, Any], option: dict[str, Any]) -> bool:
    for key, item in value.items():
        if key not in option or type(option[key]) is not list:
            return False
        if _std_value(item) not in [_std_value(o) for o in option[key]]:
            return False
    return all(key in value or "" in accepted for key, accepted in option.items())


def _list_of_dicts_match(value: list[Any], options: list[Any]) -> bool:
    for option in options:
        candidates = _as_list(option)
        if candidates is None or len(candidates) != len(value):
            continue
        if all(
            type(got) is dict and type(want) is dict and _dict_matches_option(got, want)
            for got, want in zip(value, candidates)
        ):
            return True
    return False


def _json_type(value: Any) -> str:
    names = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array",
             dict: "object", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def reference_arguments(
    possible: dict[str, list[Any]], *, minimal: bool, required: tuple[str, ...] = ()
) -> dict[str, JSONValue]:
    """A call built from the possible answer: each parameter's first concrete
    value (nested dicts likewise). ``minimal`` omits every parameter that may
    be omitted and is not in ``required``. Used by tests and as an example of
    a right answer."""
    out: dict[str, JSONValue] = {}
    for name, options in possible.items():
        concrete = [o for o in options if o != ""]
        if not concrete or (minimal and "" in options and name not in required):
            continue
        out[name] = _reference_value(concrete[0], minimal)
    return out


def _reference_value(value: Any, minimal: bool) -> JSONValue:
    if type(value) is dict:
        return reference_arguments(value, minimal=minimal)
    if type(value) is list:
        return [_reference_value(v, minimal) for v in value]
    # a scalar of the possible answer, which is JSON data read untyped
    return cast(JSONValue, value)
